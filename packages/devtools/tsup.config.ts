import { packageConfig } from '../../tsup.shared';

// The panel is a client component: a Next.js root layout (a Server Component) renders it.
export default packageConfig(
  { index: 'src/index.ts', production: 'src/production.ts' },
  { client: true },
);
