/**
 * The dependency rules (`npm run deps`, run in .ci/run after the typecheck). Type-only imports count
 * like any other: the swc parser reads every import declaration.
 *
 * - The layers point one way (docs/architecture.md, "Layers"): every module sits in one layer of
 *   LAYERS and imports only from its own layer and the layers below. No import runs back up a
 *   layer, and the folders that share a layer import each other not at all. What a lower layer
 *   needs of a higher one is a port the lower layer defines and the higher one provides
 *   (kernel/feature.ts `provideHttp`, http/authenticator.ts, http/draining-gate.ts `DrainState`).
 * - The composition root (src/services.ts, src/app.ts, src/boot.ts) lists, builds and mounts the
 *   features, so it imports their builds (index.ts). Nothing else does.
 * - A feature imports its own folder freely and, of another feature, only its public face
 *   (public.ts: the feature's ref, types, constants, helpers); it reaches another's services
 *   through `use(ref)` at build time.
 * - The voice module (src/voice) has one public face too: code outside it imports only
 *   src/voice/public.ts (the engines' ports included), so the module can change inside freely.
 * - One domain error: code refuses with `Refused` (src/refusals.ts); only src/http maps it to each
 *   surface's answer, so only src/http imports its shape (src/http/errors.ts, `ApiError`).
 * - No import cycles, type-only ones included.
 */

/** Bottom to top; each entry's paths are regular expressions from the repository's root. */
const LAYERS = [
  // Leaves everything reads: the pure charts, ids, clocks, the domain's refusals, guarded fetch.
  { name: 'base', paths: ['^machines/', '^src/(net|crypto)/', '^src/(ids|clock|logger|crash-points|time-zones|zoned-time|listen-port|refusals|instant)\\.ts$'] },
  { name: 'stores', paths: ['^src/store/', '^src/coordination/', '^src/files/'] },
  { name: 'runtime', paths: ['^actors/', '^src/events/'] },
  { name: 'settings', paths: ['^src/config(-values)?\\.ts$', '^src/catalog/'] },
  { name: 'http', paths: ['^src/http/'] },
  { name: 'voice', paths: ['^src/voice/'] },
  { name: 'vendors', paths: ['^src/providers/'] },
  { name: 'metrics', paths: ['^src/metrics/'] },
  { name: 'kernel', paths: ['^src/kernel/'] },
  { name: 'features', paths: ['^src/features/'] },
  { name: 'root', paths: ['^src/(services|app|boot|server|index)\\.ts$'] },
]

const ALL_LAYERS = LAYERS.flatMap((layer) => layer.paths)

/** An import from a layer into any layer above it. */
const layerRules = LAYERS.slice(0, -1).map((layer, i) => ({
  name: `layer-${layer.name}-imports-only-below`,
  comment: `The ${layer.name} layer imports only from its own layer and those below (docs/architecture.md, Layers): move the shared piece down, or define a port here that the layer above provides.`,
  severity: 'error',
  from: { path: layer.paths },
  to: { path: LAYERS.slice(i + 1).flatMap((above) => above.paths) },
}))

/** Folders that share a layer (the base's leaves and the composition root aside) import each other not at all. */
const siblingRules = LAYERS.filter((layer) => layer.name !== 'base' && layer.name !== 'root' && layer.paths.length > 1).flatMap((layer) =>
  layer.paths.map((path) => ({
    name: `layer-${layer.name}-siblings-apart`,
    comment: `Folders of the ${layer.name} layer import each other not at all: one that needs another belongs a layer above it.`,
    severity: 'error',
    from: { path },
    to: { path: layer.paths.filter((other) => other !== path) },
  })),
)

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      comment: 'An import cycle, type-only ones included: move the shared piece into its own file.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    ...layerRules,
    ...siblingRules,
    {
      name: 'every-module-in-a-layer',
      comment: 'A new folder or top-level file takes its place in LAYERS (and in docs/architecture.md, Layers) before anything imports it.',
      severity: 'error',
      from: { path: '^(src|actors|machines)/', pathNot: ALL_LAYERS },
      to: {},
    },
    {
      name: 'imports-only-modules-in-a-layer',
      comment: 'A new folder or top-level file takes its place in LAYERS (and in docs/architecture.md, Layers) before anything imports it.',
      severity: 'error',
      from: {},
      to: { path: '^(src|actors|machines)/', pathNot: ALL_LAYERS },
    },
    {
      name: 'feature-imports-public-faces',
      comment: "A feature imports only other features' public.ts (its own folder freely); their services come through use(ref).",
      severity: 'error',
      from: { path: '^src/features/([^/]+)/' },
      to: { path: '^src/features/', pathNot: ['^src/features/$1/', '^src/features/[^/]+/public\\.ts$'] },
    },
    {
      name: 'voice-imports-public-face',
      comment: 'Outside src/voice, the voice module is reached only through src/voice/public.ts: export what is needed there.',
      severity: 'error',
      from: { pathNot: '^src/voice/' },
      to: { path: '^src/voice/', pathNot: '^src/voice/public\\.ts$' },
    },
    {
      name: 'refusals-shaped-only-at-the-edge',
      comment: "Code refuses with src/refusals.ts's Refused; ApiError is src/http's answer shape, which only src/http builds.",
      severity: 'error',
      from: { pathNot: '^src/http/' },
      to: { path: '^src/http/errors\\.ts$' },
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
