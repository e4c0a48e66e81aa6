/**
 * The authenticator port: what the kernel needs to know about a request's credential, so `http/`
 * depends on this, not on the keys and workspaces features (the tenancy feature implements it).
 * The principal and workspace types are the feature's own; the kernel reads only these members.
 */

export const SCOPES = ['full', 'build', 'read'] as const
export type Scope = (typeof SCOPES)[number]

/** The header that selects a customer workspace (docs/spec.md Authentication rule 3). */
export const WORKSPACE_HEADER = 'service-workspace'

export interface HttpWorkspace {
  id: string
  kind: 'developer' | 'customer'
}

/** Who a key belongs to, as far as the kernel's rules go (read-only keys, scopes, developer-only routes). */
export interface HttpPrincipal<W extends HttpWorkspace = HttpWorkspace> {
  key: { id: string; scope: Scope }
  /** The workspace the key opens. */
  home: W
  /** The developer workspace behind it. */
  developer: W
}

/**
 * Both run on every API request. An answer known without a store read (a cached key, the key's own
 * workspace) comes back as a value, not a promise, so the request context need not wait a turn for it;
 * either may throw its refusal at once or reject with it.
 */
export interface Authenticator<P extends HttpPrincipal<W>, W extends HttpWorkspace> {
  /** The bearer credential (`Authorization` header) as a principal; throws the 401 when missing, wrong or revoked. */
  authenticate(authorization: string | null): P | Promise<P>
  /** The workspace the request runs in, from the `Service-Workspace` header (docs/spec.md's 400/404/410 refusals). */
  resolve(principal: P, header: string | null): W | Promise<W>
}

/** The per-credential rate-limit subject: a hash, so raw keys never reach the coordination store. */
export const hashKey = (value: string): string => Bun.SHA256.hash(value, 'hex') as string
