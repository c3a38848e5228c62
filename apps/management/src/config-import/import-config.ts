import type { OutboundUrlPolicy } from '@credential-service/core-domain'
import { tenantChanged } from '@credential-service/db-schema'
import { type AppliedCounts, type ApplyDeps, applyTenantPlan, ImportRejected } from './apply-tenant'
import { type ImportIssue, readConfigDir } from './read-config-dir'
import { validateTenantFolder } from './validate-tenant'

export interface TenantImportResult {
  tenant: string
  status: 'imported' | 'rejected'
  counts?: AppliedCounts
  issues: ImportIssue[]
}

export interface ImportReport {
  tenants: TenantImportResult[]
  ok: boolean
}

/**
 * Imports `<dir>/<tenant>/…` (DESIGN.md "Configuration import"). Each tenant is validated whole
 * and applied in its own transaction: a bad file rejects that tenant and leaves it untouched,
 * other tenants still import. Files are only read, never rewritten.
 */
export async function importConfigDir(
  deps: ApplyDeps & { outbound: OutboundUrlPolicy },
  dir: string,
  env: Record<string, string | undefined>,
): Promise<ImportReport> {
  const tree = readConfigDir(dir, env)
  const results: TenantImportResult[] = []
  for (const folder of tree.tenants) {
    const { plan, issues } = validateTenantFolder(folder, deps.outbound)
    issues.unshift(...(tree.issues.get(folder.tenant) ?? []))
    if (issues.length) {
      results.push({ tenant: folder.tenant, status: 'rejected', issues })
      continue
    }
    try {
      results.push({
        tenant: folder.tenant,
        status: 'imported',
        counts: await applyTenantPlan(deps, plan),
        issues: [],
      })
      tenantChanged(folder.tenant)
    } catch (error) {
      if (!(error instanceof ImportRejected)) throw error
      results.push({ tenant: folder.tenant, status: 'rejected', issues: error.issues })
    }
  }
  return { tenants: results, ok: results.every((result) => result.status === 'imported') }
}

/** The report as lines for a terminal or a log. */
export function formatImportReport(report: ImportReport): string {
  return report.tenants
    .flatMap((result) => [
      `${result.tenant}: ${result.status}${
        result.counts
          ? ` (${Object.entries(result.counts)
              .map(([k, v]) => `${k} ${v}`)
              .join(', ')})`
          : ''
      }`,
      ...result.issues.map(
        (issue) => `  ${issue.file}${issue.path ? ` ${issue.path}` : ''}: ${issue.message}`,
      ),
    ])
    .join('\n')
}
