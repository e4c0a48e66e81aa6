/**
 * One OpenAPI 3.1 document per surface, generated from the route schemas by
 * @elysiajs/openapi's `toOpenAPISchema`, then corrected where the generator is wrong for us:
 * - an empty answer (204) gets no `content` (the generator writes an invalid `{ type: null }`);
 * - request bodies are JSON only (docs/spec.md Conventions rule 1), not form encodings;
 * - v1 operations declare the `Service-Workspace` header (Authentication rule 3).
 * The browsable page loads the document by absolute path (the plugin's relative one breaks
 * under a prefix).
 */
import { toOpenAPISchema } from '@elysiajs/openapi'
import type { AnyElysia } from 'elysia'
import { VIEWER_FILES, viewerFile } from './docs-viewer'

export interface DocsOptions {
  /** Page path; the document is served at `${path}/json`. */
  path: string
  title: string
  version: string
  description: string
  /** Route paths to leave out (other surfaces, documentation routes). */
  exclude: RegExp[]
  /** Adds the Service-Workspace header parameter to every operation. */
  workspaceHeader?: boolean
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const

const WORKSPACE_PARAMETER = {
  name: 'Service-Workspace',
  in: 'header',
  required: false,
  description: 'a customer id (`org_…`) to run inside that customer workspace; absent or your own workspace id runs in your own',
  schema: { type: 'string' },
}

/** The parts of a generated operation corrected here. */
interface Operation {
  requestBody?: { content?: Record<string, { schema?: unknown } | undefined> }
  responses?: Record<string, { content?: Record<string, unknown> } | undefined>
  parameters?: { in?: string; name?: unknown }[]
}

function fixOperation(op: Operation, workspaceHeader: boolean, bodySchema: unknown): void {
  if (op.requestBody) {
    // Our JSON parser (json-body.ts) is a function, which the generator cannot read a media type
    // from: the body is JSON, with the route's own schema.
    const schema = op.requestBody.content?.['application/json']?.schema ?? bodySchema
    op.requestBody.content = schema ? { 'application/json': { schema } } : {}
  }
  for (const response of Object.values(op.responses ?? {})) {
    // A body-less answer: the generator puts the schema where media types belong.
    if (response?.content && typeof response.content.type === 'string') delete response.content
  }
  if (workspaceHeader) {
    op.parameters ??= []
    const params = op.parameters
    if (!params.some((p) => p.in === 'header' && String(p.name).toLowerCase() === 'service-workspace')) params.push(WORKSPACE_PARAMETER)
  }
}

export function buildDocument(app: AnyElysia, options: DocsOptions): Record<string, unknown> {
  const { paths, components } = toOpenAPISchema(app, { paths: options.exclude }, undefined, undefined, '3.1.0')
  // Route body schemas by OpenAPI path and method (`/agents/:id` is `/agents/{id}` there).
  const bodies = new Map<string, unknown>()
  for (const route of app.routes as { method: string; path: string; hooks?: { body?: unknown } }[]) {
    if (route.hooks?.body) bodies.set(`${route.method.toLowerCase()} ${route.path.replace(/:(\w+)/g, '{$1}')}`, route.hooks.body)
  }
  for (const [path, item] of Object.entries(paths) as [string, Partial<Record<(typeof METHODS)[number], Operation>> | undefined][]) {
    for (const method of METHODS) if (item?.[method]) fixOperation(item[method], options.workspaceHeader ?? false, bodies.get(`${method} ${path}`))
  }
  return {
    openapi: '3.1.0',
    info: { title: options.title, version: options.version, description: options.description },
    security: [{ bearer: [] }],
    paths,
    components: {
      ...components,
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'an API key (`sk_…`)' } },
    },
  }
}

/**
 * The browsable page: Swagger UI (docs-viewer.ts) from our own routes, loading our document by
 * absolute path, with a link to the document itself. Nothing on it comes from another host.
 */
export function docsPage(options: DocsOptions): string {
  const esc = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)
  const path = esc(options.path)
  return `<!doctype html>
<html lang="en">
  <head>
    <title>${esc(options.title)}</title>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <link rel="icon" href="data:," />
    <link rel="stylesheet" href="${path}/assets/swagger-ui.css" />
  </head>
  <body>
    <p style="font-family: sans-serif; margin: 1em 20px">The OpenAPI 3.1 document: <a href="${path}/json">${path}/json</a></p>
    <div id="docs" data-url="${path}/json"></div>
    <script src="${path}/assets/swagger-ui-bundle.js"></script>
    <script src="${path}/assets/start.js"></script>
  </body>
</html>`
}

/**
 * The page loads only our own files (Swagger UI sets inline styles and draws with data: images) and
 * is framed by no site: a page of ours inside another site's frame is a clickjacking aid.
 */
const PAGE_HEADERS = {
  'content-security-policy':
    "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'; base-uri 'none'; form-action 'none'",
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
}

/**
 * Adds `GET path` (page), `GET path/json` (document, built once on first request) and the
 * viewer's files under `GET path/assets/` to `app`.
 */
export function mountDocs<A extends AnyElysia>(app: A, options: DocsOptions): A {
  let cached: string | null = null
  for (const name of VIEWER_FILES) app.get(`${options.path}/assets/${name}`, ({ request }) => viewerFile(name, request), { detail: { hide: true } })
  return app
    .get(options.path, () => new Response(docsPage(options), { headers: { 'content-type': 'text/html; charset=utf-8', ...PAGE_HEADERS } }), { detail: { hide: true } })
    .get(
      `${options.path}/json`,
      () => {
        cached ??= JSON.stringify(buildDocument(app, options))
        return new Response(cached, { headers: { 'content-type': 'application/json', 'x-content-type-options': 'nosniff' } })
      },
      { detail: { hide: true } },
    ) as A
}
