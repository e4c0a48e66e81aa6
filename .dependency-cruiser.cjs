/**
 * The dependency rules (`npm run deps`, run in .ci/run after the typecheck). Type-only imports count
 * like any other: the swc parser reads every import declaration.
 *
 * - The kernel (src/kernel, src/http, src/store, src/coordination, actors/, machines/) and the
 *   shared code beside it (src/media, src/providers, src/events, src/catalog, src/net, src/crypto
 *   and src/*.ts) import no feature. What the kernel needs of a feature is a port the kernel
 *   defines and the feature provides at build time (kernel/feature.ts `provideHttp`,
 *   http/authenticator.ts); an actor binding takes its effects as a parameter.
 * - The composition root (src/services.ts, src/app.ts, src/boot.ts) lists, builds and mounts the
 *   features, so it imports their builds (index.ts). Nothing else does.
 * - A feature imports its own folder freely and, of another feature, only its public face
 *   (public.ts: the feature's ref, types, constants, helpers); it reaches another's services
 *   through `use(ref)` at build time.
 * - No import cycles, type-only ones included.
 */
const COMPOSITION_ROOT = '^src/(services|app|boot)\\.ts$'

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import cycle, type-only ones included: move the shared piece into its own file.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'kernel-imports-no-feature',
      comment: 'The kernel knows no feature: define a port in the kernel and let the feature provide it at build time.',
      severity: 'error',
      from: { path: '^(src/(kernel|http|store|coordination)|actors|machines)/' },
      to: { path: '^src/features/' },
    },
    {
      name: 'shared-code-imports-no-feature',
      comment: 'Code outside src/features (media, providers, events, catalogues, …) imports no feature; only the composition root does.',
      severity: 'error',
      from: { path: '^src/', pathNot: ['^src/features/', '^src/(kernel|http|store|coordination)/', COMPOSITION_ROOT] },
      to: { path: '^src/features/' },
    },
    {
      name: 'feature-imports-public-faces',
      comment: "A feature imports only other features' public.ts (its own folder freely); their services come through use(ref).",
      severity: 'error',
      from: { path: '^src/features/([^/]+)/' },
      to: { path: '^src/features/', pathNot: ['^src/features/$1/', '^src/features/[^/]+/public\\.ts$'] },
    },
    {
      name: 'only-the-root-imports-a-build',
      comment: "A feature's index.ts is its build: only the composition root imports it (public.ts never does).",
      severity: 'error',
      from: { path: '^src/features/' },
      to: { path: '^src/features/[^/]+/index\\.ts$' },
    },
    {
      name: 'not-to-unresolvable',
      comment: 'Every import resolves, so no dependency escapes these rules.',
      severity: 'error',
      from: {},
      to: { couldNotResolve: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    // The widget's browser scripts are served as files, not imported.
    exclude: { path: '^src/features/web/assets/' },
    // TypeScript 7 no longer ships the compiler API dependency-cruiser's own TypeScript parser needs.
    parser: 'swc',
    enhancedResolveOptions: { extensions: ['.ts', '.js', '.json'], exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default', 'types'] },
  },
}
