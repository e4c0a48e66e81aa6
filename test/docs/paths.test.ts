/**
 * Every path the docs and the code's comments cite exists in the repository, and every reference
 * to the product's spec and design points at the copies in docs/ (docs/spec.md, docs/design.md),
 * not at files outside the repository. The README stays a front door (at most 300 lines).
 */
import { describe, expect, test } from 'bun:test'
import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { dirname, join, relative, resolve } from 'node:path'

const ROOT = resolve(import.meta.dir, '../..')
/** Folders whose paths are written from the repository's root, in docs and in comments alike. */
const ROOTS = ['src', 'test', 'bench', 'docs', 'machines', 'actors', '.ci']
/** The contract, copied verbatim: their own references are the original's. */
const VERBATIM = new Set(['docs/spec.md', 'docs/design.md'])
const CODE_FOLDERS = ['src', 'actors', 'machines', 'test', 'bench']

interface Finding {
  file: string
  line: number
  problem: string
}

function walk(dir: string, keep: (path: string) => boolean): string[] {
  const out: string[] = []
  for (const entry of readdirSync(join(ROOT, dir), { withFileTypes: true })) {
    const path = `${dir}/${entry.name}`
    if (entry.isDirectory()) out.push(...walk(path, keep))
    else if (keep(path)) out.push(path)
  }
  return out
}

const lineAt = (text: string, index: number) => text.slice(0, index).split('\n').length

// A root-relative path: one of ROOTS, then path characters; not part of a URL or a longer path.
const ROOT_PATH = new RegExp(`(?<![\\w./-])(?:${ROOTS.map((r) => r.replace('.', '\\.')).join('|')})/[\\w./<>{}*…-]*`, 'g')
// Placeholders (`actors/<kind>.ts`, `src/features/{name}/`) name a pattern, not a file.
const isPlaceholder = (path: string) => /[<>{}*…]/.test(path)
const trimPath = (path: string) => path.replace(/[.,:;)]+$/, '')

/** Root-relative paths cited in `text` that do not exist. */
function missingRootPaths(text: string): { path: string; index: number }[] {
  const out: { path: string; index: number }[] = []
  for (const m of text.matchAll(ROOT_PATH)) {
    const path = trimPath(m[0])
    if (isPlaceholder(path) || path.endsWith('/.')) continue
    if (!existsSync(join(ROOT, path))) out.push({ path, index: m.index })
  }
  return out
}

/** GitHub's heading anchors: lower case, punctuation dropped, spaces as hyphens, repeats numbered. */
function anchorsOf(markdown: string): Set<string> {
  const anchors = new Set<string>()
  const seen = new Map<string, number>()
  for (const m of withoutFences(markdown).matchAll(/^#{1,6}\s+(.+?)\s*#*\s*$/gm)) {
    const base = m[1]
      .replace(/`/g, '')
      .replace(/\[([^\]]*)\]\([^)]*\)/g, '$1')
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-')
    const n = seen.get(base) ?? 0
    seen.set(base, n + 1)
    anchors.add(n === 0 ? base : `${base}-${n}`)
  }
  return anchors
}

/** The text with fenced code blocks blanked (kept as empty lines, so line numbers hold). */
function withoutFences(markdown: string): string {
  return markdown.replace(/^(```|~~~)[^\n]*\n[\s\S]*?^\1[^\n]*$/gm, (block) => block.replace(/[^\n]/g, ''))
}

/** What is wrong with the paths and links of one markdown file (`file` is root-relative). */
export function checkMarkdown(file: string, markdown: string, exists = (p: string) => existsSync(join(ROOT, p))): Finding[] {
  const findings: Finding[] = []
  const text = withoutFences(markdown)
  const report = (index: number, problem: string) => findings.push({ file, line: lineAt(text, index), problem })

  // Links: relative to the file; an anchor into a markdown file must name one of its headings.
  for (const m of text.matchAll(/\]\(([^)\s]+)(?:\s+"[^"]*")?\)/g)) {
    const target = m[1]
    if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue
    const [path, anchor] = target.split('#', 2) as [string, string | undefined]
    const resolved = path === '' ? file : relative(ROOT, resolve(ROOT, dirname(file), path))
    if (resolved.startsWith('..')) report(m.index, `link ${target} leaves the repository`)
    else if (!exists(resolved)) report(m.index, `link ${target}: ${resolved} does not exist`)
    else if (anchor !== undefined && resolved.endsWith('.md')) {
      const targetText = resolved === file ? markdown : readFileSync(join(ROOT, resolved), 'utf8')
      if (!anchorsOf(targetText).has(anchor)) report(m.index, `link ${target}: no heading #${anchor} in ${resolved}`)
    }
  }

  // Root-relative paths, in code spans or in the prose.
  const prose = text.replace(/\]\([^)]*\)/g, (s) => s.replace(/[^\n]/g, ' '))
  for (const m of prose.matchAll(ROOT_PATH)) {
    const path = trimPath(m[0])
    if (isPlaceholder(path) || path.endsWith('/.')) continue
    if (!exists(path)) report(m.index, `${path} does not exist`)
  }

  // The spec and the design are docs/spec.md and docs/design.md, never files beside the repository.
  for (const m of text.matchAll(/\.\.\/shared\b|(?<![\w/])(?:SPEC|DESIGN)\.md\b/g)) {
    report(m.index, `${m[0]}: cite docs/spec.md or docs/design.md`)
  }
  return findings
}

interface Comment {
  text: string
  pos: number
}

// After these a `/` starts a regular expression, not a division.
const BEFORE_REGEX = new Set(['return', 'typeof', 'instanceof', 'in', 'of', 'new', 'delete', 'void', 'throw', 'case', 'do', 'else', 'yield', 'await'])

/**
 * The comments of a TypeScript or JavaScript file: a small lexer that steps over strings, template
 * literals (with their `${}` code) and regular expressions, so text in them is never read as a
 * comment. (TypeScript 7, the project's compiler, has no stable JavaScript API to ask instead.)
 */
export function commentsOf(source: string): Comment[] {
  const out: Comment[] = []
  // Brace depth at each open `${`: its `}` returns to the template.
  const substitutions: number[] = []
  let depth = 0
  let last = '' // the previous significant token: a word, or one punctuation character
  let i = 0
  const templateFrom = (from: number): number => {
    let j = from
    while (j < source.length) {
      const c = source[j]
      if (c === '\\') j += 2
      else if (c === '`') return j + 1
      else if (c === '$' && source[j + 1] === '{') {
        substitutions.push(depth)
        depth++
        last = '{'
        return j + 2
      } else j++
    }
    return j
  }
  while (i < source.length) {
    const c = source[i]
    const next = source[i + 1]
    if (c === '/' && next === '/') {
      const end = source.indexOf('\n', i)
      const stop = end < 0 ? source.length : end
      out.push({ text: source.slice(i, stop), pos: i })
      i = stop
    } else if (c === '/' && next === '*') {
      const end = source.indexOf('*/', i + 2)
      const stop = end < 0 ? source.length : end + 2
      out.push({ text: source.slice(i, stop), pos: i })
      i = stop
    } else if (c === '"' || c === "'") {
      let j = i + 1
      while (j < source.length && source[j] !== c && source[j] !== '\n') j += source[j] === '\\' ? 2 : 1
      i = j + 1
      last = 'x'
    } else if (c === '`') {
      i = templateFrom(i + 1)
      if (source[i - 1] === '`') last = 'x'
    } else if (c === '/') {
      const division = /^[\w$]+$/.test(last) ? !BEFORE_REGEX.has(last) : last === ')' || last === ']' || last === '}'
      if (division) {
        i++
        last = '/'
      } else {
        let j = i + 1
        let inClass = false
        while (j < source.length && source[j] !== '\n') {
          const r = source[j]
          if (r === '\\') j++
          else if (r === '[') inClass = true
          else if (r === ']') inClass = false
          else if (r === '/' && !inClass) break
          j++
        }
        i = j + 1
        while (i < source.length && /[a-z]/i.test(source[i])) i++
        last = 'x'
      }
    } else if (/[\w$]/.test(c)) {
      let j = i
      while (j < source.length && /[\w$]/.test(source[j])) j++
      last = source.slice(i, j)
      i = j
    } else if (/\s/.test(c)) i++
    else {
      if (c === '{') depth++
      else if (c === '}') {
        depth--
        if (substitutions.length > 0 && substitutions[substitutions.length - 1] === depth) {
          substitutions.pop()
          i = templateFrom(i + 1)
          if (source[i - 1] === '`') last = 'x'
          continue
        }
      }
      last = c
      i++
    }
  }
  return out
}

/** What is wrong with the references in one code file's comments. */
export function checkComments(file: string, source: string, readmeHeadings: Set<string>): Finding[] {
  const findings: Finding[] = []
  for (const c of commentsOf(source)) {
    const report = (index: number, problem: string) => findings.push({ file, line: lineAt(source, c.pos + index), problem })
    for (const m of c.text.matchAll(/\.\.\/shared\b|shared\/(?:SPEC|DESIGN)\b|(?<!docs\/)\b(?:SPEC|DESIGN)\.md\b/gi)) {
      report(m.index, `${m[0]}: cite docs/spec.md or docs/design.md`)
    }
    for (const { path, index } of missingRootPaths(c.text)) report(index, `${path} does not exist`)
    // A README section named in quotes must be one the README has (the rest lives in docs/).
    for (const m of c.text.matchAll(/\bREADME(?:'s)?,? (?:API notes,? )?"([^"]+)"/g)) {
      if (!readmeHeadings.has(m[1].toLowerCase())) report(m.index, `README has no section "${m[1]}": cite the file in docs/ that has it`)
    }
  }
  return findings
}

const describeFindings = (findings: Finding[]) => findings.map((f) => `${f.file}:${f.line}: ${f.problem}`)

describe('docs', () => {
  const docs = ['README.md', ...walk('docs', (p) => p.endsWith('.md') && !VERBATIM.has(p))]

  test('the spec and the design are in the repository', () => {
    for (const p of VERBATIM) expect(existsSync(join(ROOT, p))).toBe(true)
  })

  test('every path and link in README.md and docs/ exists', () => {
    expect(docs.length).toBeGreaterThan(10)
    const findings = docs.flatMap((file) => checkMarkdown(file, readFileSync(join(ROOT, file), 'utf8')))
    expect(describeFindings(findings)).toEqual([])
  })

  test('the README stays a front door: at most 300 lines', () => {
    const lines = readFileSync(join(ROOT, 'README.md'), 'utf8').trimEnd().split('\n').length
    expect(lines).toBeLessThanOrEqual(300)
  })

  test('every path, spec and design reference in the code comments resolves inside the repository', () => {
    const readme = readFileSync(join(ROOT, 'README.md'), 'utf8')
    const headings = new Set([...withoutFences(readme).matchAll(/^#{1,6}\s+(.+?)\s*$/gm)].map((m) => m[1].toLowerCase()))
    const files = CODE_FOLDERS.flatMap((dir) => walk(dir, (p) => /\.(ts|js)$/.test(p)))
    expect(files.length).toBeGreaterThan(100)
    const findings = files.flatMap((file) => checkComments(file, readFileSync(join(ROOT, file), 'utf8'), headings))
    expect(describeFindings(findings)).toEqual([])
  })
})

describe('the checks catch what they are for', () => {
  const none = () => false

  test('a missing path, link or anchor in markdown is reported', () => {
    const md = [
      '# Title',
      'See `src/no/such/file.ts` and src/also/missing.ts, [a link](api/none.md), [here](#title) and [there](#nowhere).',
      '```sh',
      'cat src/in/a/fence.ts',
      '```',
      'Placeholders name patterns: `actors/<kind>.ts`. Per SPEC.md and ../shared/DESIGN.md.',
    ].join('\n')
    const problems = describeFindings(checkMarkdown('docs/x.md', md, (p) => p === 'docs/x.md'))
    expect(problems).toEqual([
      'docs/x.md:2: link api/none.md: docs/api/none.md does not exist',
      'docs/x.md:2: link #nowhere: no heading #nowhere in docs/x.md',
      'docs/x.md:2: src/no/such/file.ts does not exist',
      'docs/x.md:2: src/also/missing.ts does not exist',
      'docs/x.md:6: SPEC.md: cite docs/spec.md or docs/design.md',
      'docs/x.md:6: ../shared: cite docs/spec.md or docs/design.md',
    ])
    expect(checkMarkdown('docs/x.md', '[out](../../elsewhere.md)', none).map((f) => f.problem)).toEqual(['link ../../elsewhere.md leaves the repository'])
  })

  test('comments are checked, strings and code are not', () => {
    const source = [
      '/** Per SPEC.md Limits (README "Voice"); see src/no/such.ts. docs/spec.md is fine. */',
      "const s = 'SPEC.md in a string, src/no/such.ts too'",
      '// the contract: ../shared/DESIGN.md',
      'const r = /\\/\\/ not a comment SPEC.md/',
    ].join('\n')
    const problems = describeFindings(checkComments('src/x.ts', source, new Set(['tests'])))
    expect(problems).toEqual([
      'src/x.ts:1: SPEC.md: cite docs/spec.md or docs/design.md',
      'src/x.ts:1: src/no/such.ts does not exist',
      'src/x.ts:1: README has no section "Voice": cite the file in docs/ that has it',
      'src/x.ts:3: ../shared: cite docs/spec.md or docs/design.md',
      'src/x.ts:3: DESIGN.md: cite docs/spec.md or docs/design.md',
    ])
  })
})
