import type { Options } from 'tsup';
import { markClientModules, packageConfig } from '../../tsup.shared';

export default {
  ...packageConfig({ index: 'src/index.ts', production: 'src/production.ts' }),
  // The panel is a client component: a Next.js root layout (a Server Component) renders it.
  onSuccess: async () =>
    markClientModules(['index', 'production'].flatMap((e) => [`dist/${e}.js`, `dist/${e}.cjs`])),
} satisfies Options as Options;
