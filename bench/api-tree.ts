/**
 * bench:api --against <commit>: that commit checked out in a temporary detached git worktree
 * (sharing this checkout's node_modules), so both trees run under the same load in one run.
 * The worktree is removed again by `remove`, also when the bench fails.
 */
import { existsSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export interface Tree {
  /** What the tables call it: `this tree`, or the commit's short hash. */
  label: string
  dir: string
  remove(): void
}

function git(cwd: string, args: string[]): string {
  const run = Bun.spawnSync(['git', ...args], { cwd, stdout: 'pipe', stderr: 'pipe' })
  if (run.exitCode !== 0) throw new Error(`git ${args.join(' ')}: ${run.stderr.toString().trim()}`)
  return run.stdout.toString().trim()
}

/** The working tree we run from, as it is (uncommitted changes included). */
export function currentTree(root: string): Tree {
  const head = git(root, ['rev-parse', '--short', 'HEAD'])
  const dirty = git(root, ['status', '--porcelain', '--untracked-files=no']) !== ''
  return { label: `this tree (${head}${dirty ? '+changes' : ''})`, dir: root, remove: () => {} }
}

/** `commit` in a new detached worktree under `parent` (default: the temp dir). */
export function commitTree(root: string, commit: string, parent = tmpdir()): Tree {
  const sha = git(root, ['rev-parse', '--verify', `${commit}^{commit}`])
  const dir = join(mkdtempSync(join(parent, `bench-api-${sha.slice(0, 8)}-`)), 'tree')
  git(root, ['worktree', 'add', '--detach', '--quiet', dir, sha])
  let removed = false
  const remove = () => {
    if (removed) return
    removed = true
    try {
      git(root, ['worktree', 'remove', '--force', dir])
    } catch {
      /* removed by hand below */
    }
    rmSync(join(dir, '..'), { recursive: true, force: true })
    git(root, ['worktree', 'prune'])
  }
  try {
    const modules = join(root, 'node_modules')
    if (existsSync(modules)) symlinkSync(realpathSync(modules), join(dir, 'node_modules'))
  } catch (error) {
    remove()
    throw error
  }
  return { label: sha.slice(0, 7), dir, remove }
}
