import { parseArgs } from 'node:util'
import { migrateConfigDir } from '@credential-service/management'

// `pnpm config:migrate <dir> --out <newdir>`: converts a 4.x (version 1 credentials) or 3.x
// (keys/ + certs/) configuration folder to the 5.0 layout in a new folder; the input is only read.
const { positionals, values } = parseArgs({ allowPositionals: true, options: { out: { type: 'string' } } })
const [input] = positionals
if (!input || !values.out) {
  console.error('usage: config:migrate <dir> --out <newdir>')
  process.exit(2)
}
try {
  const result = migrateConfigDir(input, values.out)
  for (const change of result.changes) console.log(change)
  console.log(`wrote ${result.written.length} file(s) to ${values.out}; ${input} was not changed`)
} catch (error) {
  console.error(`config:migrate: ${(error as Error).message}`)
  process.exit(1)
}
