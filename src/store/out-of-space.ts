/**
 * Whether a store failure is the disk being full: SQLite's SQLITE_FULL ("database or disk is
 * full", also what a write past `max_page_count` answers), a file system's ENOSPC, or MongoDB's
 * OutOfDiskSpace (code 14031). Such a write saved nothing, and retrying it will fail until an
 * operator frees space: the HTTP kernel answers 507 naming the cause, and readiness reports it.
 */

/** MongoDB's error code for a server out of disk space. */
const MONGO_OUT_OF_DISK_SPACE = 14031

export function isOutOfSpace(error: unknown): boolean {
  const e = error as { code?: unknown; errno?: unknown } | null
  if (!e || typeof e !== 'object') return false
  if (e.code === 'SQLITE_FULL' || e.code === 'ENOSPC' || e.code === MONGO_OUT_OF_DISK_SPACE) return true
  return false
}
