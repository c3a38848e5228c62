import { Anchor, Badge, Button, Modal, Stack, Table, Text } from '@mantine/core'
import { useDisclosure } from '@mantine/hooks'
import { useQueryClient } from '@tanstack/react-query'
import { Link, useNavigate } from 'react-router'
import { canWrite } from '../access'
import { useSession } from '../auth/auth'
import { PagerBar, useCursorPages } from '../components/cursor-pages'
import { PageTitle } from '../components/shell'
import { GenerateKeyChainForm } from './key-chain-form'
import { keyChainsApi } from './key-chains-api'

/** Key chains of the active tenant: list and generate; the detail page shows, rotates, deletes. */
export default function KeyChainsPage() {
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const keyChains = keyChainsApi(session.api, tenantId)
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const pages = useCursorPages(['key-chains', tenantId], keyChains.list)
  const [creating, { open, close }] = useDisclosure(false)
  return (
    <Stack>
      <PageTitle title={`Key chains of ${tenantId}`}>
        {canWrite(session, 'key-chains') && <Button onClick={open}>Generate key chain</Button>}
      </PageTitle>
      <Table striped>
        <Table.Thead>
          <Table.Tr>
            <Table.Th>Id</Table.Th>
            <Table.Th>Provider</Table.Th>
            <Table.Th>Algorithm</Table.Th>
            <Table.Th>Certificate</Table.Th>
            <Table.Th>Rotation</Table.Th>
            <Table.Th>Created</Table.Th>
          </Table.Tr>
        </Table.Thead>
        <Table.Tbody>
          {pages.query.data?.items.map((keyChain) => (
            <Table.Tr key={keyChain.id}>
              <Table.Td>
                <Anchor component={Link} to={`/key-chains/${encodeURIComponent(keyChain.id)}`}>
                  {keyChain.id}
                </Anchor>
                {keyChain.description && (
                  <Text size="xs" c="dimmed">
                    {keyChain.description}
                  </Text>
                )}
              </Table.Td>
              <Table.Td>{keyChain.kmsProvider}</Table.Td>
              <Table.Td>{keyChain.algorithm}</Table.Td>
              <Table.Td>
                <Badge variant="light">{keyChain.certificateMode}</Badge>
              </Table.Td>
              <Table.Td>
                {keyChain.rotationPolicy.enabled
                  ? `every ${keyChain.rotationPolicy.intervalDays} days`
                  : 'manual'}
              </Table.Td>
              <Table.Td>{new Date(keyChain.createdAt).toLocaleString()}</Table.Td>
            </Table.Tr>
          ))}
        </Table.Tbody>
      </Table>
      {pages.query.data?.items.length === 0 && <Text c="dimmed">No key chain yet.</Text>}
      <PagerBar pages={pages} label="key chains" />
      <Modal opened={creating} onClose={close} title="Generate key chain" size="lg">
        <GenerateKeyChainForm
          create={keyChains.create}
          onCreated={(keyChain) => {
            close()
            void queryClient.invalidateQueries({ queryKey: ['key-chains', tenantId] })
            navigate(`/key-chains/${encodeURIComponent(keyChain.id)}`)
          }}
        />
      </Modal>
    </Stack>
  )
}
