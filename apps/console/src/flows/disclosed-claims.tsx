import { Table, Text, Title } from '@mantine/core'
import { claimRows, credentialsOf } from './claims-form'

/**
 * The claims a verified presentation disclosed, per DCQL credential query id (the session's
 * `claims`): one table each.
 */
export function DisclosedClaims({ claims }: { claims: Record<string, unknown> }) {
  return (
    <section aria-labelledby="disclosed-claims-title" data-testid="disclosed-claims">
      <Title order={3} size="h4" id="disclosed-claims-title" mb="xs">
        Disclosed claims
      </Title>
      {credentialsOf(claims).map(({ key, caption, disclosed }) => (
        <Table key={key} striped withTableBorder mb="sm" captionSide="top">
          <Table.Caption>{caption}</Table.Caption>
          <Table.Thead>
            <Table.Tr>
              <Table.Th>Claim</Table.Th>
              <Table.Th>Value</Table.Th>
            </Table.Tr>
          </Table.Thead>
          <Table.Tbody>
            {claimRows(disclosed).map((row) => (
              <Table.Tr key={row.path}>
                <Table.Td>{row.path}</Table.Td>
                <Table.Td>{row.value}</Table.Td>
              </Table.Tr>
            ))}
          </Table.Tbody>
        </Table>
      ))}
      {Object.keys(claims).length === 0 && <Text c="dimmed">No claim was disclosed.</Text>}
    </section>
  )
}
