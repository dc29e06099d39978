import { packageConfig } from '../../tsup.shared';

export default packageConfig({ index: 'src/index.ts', production: 'src/production.ts' });
