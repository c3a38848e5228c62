// Temporary: logs each flow's SQL to the PostgreSQL log between markers.
import postgres from 'postgres'
import { createFlows, setUpTenant } from './flows'
import { startAllInOne } from './service'

const url = process.env.BENCH_DATABASE_URL as string
const s = await startAllInOne(url)
const sql = postgres(url, { max: 1 })
try {
  const { tenant, auth } = await setUpTenant(s.base, s.rootClient, { codeFlow: false })
  const flows = await createFlows(s.base, tenant, auth, { codeFlow: false })
  for (const f of Object.values(flows)) {
    await f()
    await f()
  }
  for (const [name, f] of Object.entries(flows)) {
    await sql.unsafe(`select 'MARK-BEGIN ${name}'`)
    await f()
    await sql.unsafe(`select 'MARK-END ${name}'`)
  }
} finally {
  await sql.end()
  await s.stop()
}
