import { defineConfig } from 'drizzle-kit'

// Used by `pnpm db:generate` only: it diffs the schema against the committed migrations.
export default defineConfig({
  dialect: 'postgresql',
  schema: './src/schema/index.ts',
  out: './migrations',
  casing: 'snake_case',
})
