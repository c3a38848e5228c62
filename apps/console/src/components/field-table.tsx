import { Code, Table } from '@mantine/core'

/** A record read as label and value rows (a delivery, a connection, a signature). */
export function FieldTable({
  label,
  rows,
  testId,
}: {
  label: string
  rows: readonly (readonly [string, React.ReactNode])[]
  testId?: string
}) {
  return (
    <Table variant="vertical" aria-label={label} data-testid={testId}>
      <Table.Tbody>
        {rows.map(([name, value]) => (
          <Table.Tr key={name}>
            <Table.Th>{name}</Table.Th>
            <Table.Td>{value}</Table.Td>
          </Table.Tr>
        ))}
      </Table.Tbody>
    </Table>
  )
}

/** A long single token (a JWS, a JWT), wrapped anywhere; it takes the focus to be scrolled and copied. */
export function TokenBlock({ label, testId, token }: { label: string; testId: string; token: string }) {
  return (
    <Code
      block
      tabIndex={0}
      aria-label={label}
      data-testid={testId}
      style={{ wordBreak: 'break-all', whiteSpace: 'pre-wrap' }}
    >
      {token}
    </Code>
  )
}
