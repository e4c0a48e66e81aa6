/**
 * `npm run lint`'s cast check: `as never` and `as unknown as` silence the type checker, so each one
 * must say why (a comment on its line or the line above), and stands only where a library's types
 * force it. Prints each bare one as `file:line` and exits 1 when there are any.
 */
import { readdirSync, readFileSync, statSync } from 'node:fs'
import { join } from 'node:path'

const ROOTS = ['src', 'actors', 'machines', 'test', 'bench', 'scripts']
const CAST = /\bas (never|unknown as)\b/
// A line comment starts a line or follows a space, so the `//` of a URL in a string is no comment.
const COMMENT = /(^|\s)\/\/.*$/

function* files(dir: string): Generator<string> {
  for (const name of readdirSync(dir)) {
    const path = join(dir, name)
    if (statSync(path).isDirectory()) {
      if (name !== 'node_modules') yield* files(path)
    } else if (path.endsWith('.ts') && path !== 'scripts/check-casts.ts') yield path
  }
}

const bare: string[] = []
for (const root of ROOTS) {
  for (const file of files(root)) {
    const lines = readFileSync(file, 'utf8').split('\n')
    lines.forEach((line, i) => {
      const code = line.replace(COMMENT, '')
      if (!CAST.test(code) || /^\s*(\*|\/\*)/.test(line)) return
      const said = code !== line || /^\s*(\/\/|\/?\*)|\*\/\s*$/.test(lines[i - 1] ?? '')
      if (!said) bare.push(`${file}:${i + 1}: ${line.trim()}`)
    })
  }
}
if (bare.length) {
  console.error(`${bare.length} cast(s) with no comment saying why (as never / as unknown as):\n${bare.join('\n')}`)
  process.exit(1)
}
console.log('casts: each as never / as unknown as says why')
