/**
 * Secrets at rest (webhook signing secrets now, provider keys later): AES-256-GCM with node:crypto
 * under a key derived from SECRET_KEY. GCM authenticates as well as encrypts, so a stored value
 * that was tampered with, or written under another SECRET_KEY, fails to open instead of yielding
 * garbage.
 *
 * Stored form: `v1.<iv>.<tag>.<ciphertext>` (base64url parts). The version prefix lets a later
 * scheme (key rotation) live beside this one.
 */
import { createCipheriv, createDecipheriv, createHash, randomBytes } from 'node:crypto'

// NIST SP 800-38D: a 96-bit IV is the recommended (and most efficient) size for GCM.
const IV_BYTES = 12
// The full 128-bit tag; shorter tags weaken the authentication GCM is chosen for.
const TAG_BYTES = 16
const VERSION = 'v1'
// Domain separation: the same SECRET_KEY may derive other keys for other purposes later.
const KEY_LABEL = 'agent-platform/secrets/v1'

export class SecretOpenError extends Error {
  override readonly name = 'SecretOpenError'
}

export class SecretBox {
  private readonly key: Buffer

  constructor(secretKey: string) {
    if (secretKey.length < 32) throw new Error('SECRET_KEY must be at least 32 characters')
    // SECRET_KEY is random text of 32+ characters (config.ts), not a password, so one SHA-256
    // over a labelled input is a sound 256-bit key; a slow KDF would only slow boot.
    this.key = createHash('sha256').update(KEY_LABEL).update('\0').update(secretKey).digest()
  }

  seal(plain: string): string {
    const iv = randomBytes(IV_BYTES)
    const cipher = createCipheriv('aes-256-gcm', this.key, iv, { authTagLength: TAG_BYTES })
    const body = Buffer.concat([cipher.update(plain, 'utf8'), cipher.final()])
    const tag = cipher.getAuthTag()
    return [VERSION, iv.toString('base64url'), tag.toString('base64url'), body.toString('base64url')].join('.')
  }

  open(sealed: string): string {
    const [version, iv, tag, body] = sealed.split('.')
    if (version !== VERSION || iv === undefined || tag === undefined || body === undefined) {
      throw new SecretOpenError('not a sealed secret')
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', this.key, Buffer.from(iv, 'base64url'), { authTagLength: TAG_BYTES })
      decipher.setAuthTag(Buffer.from(tag, 'base64url'))
      return Buffer.concat([decipher.update(Buffer.from(body, 'base64url')), decipher.final()]).toString('utf8')
    } catch {
      throw new SecretOpenError('the secret cannot be opened: it was sealed under another SECRET_KEY or altered')
    }
  }
}
