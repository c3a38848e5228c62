import type { KeyChain } from '@credential-service/sdk'
import { Anchor, Badge, Button, Modal, Stack, Table, Text } from '@mantine/core'
import { useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link, useNavigate } from 'react-router'
import { canWrite } from '../access'
import { useSession } from '../auth/auth'
import { PagerBar, useCursorPages } from '../components/cursor-pages'
import { FilterCard, useSearch } from '../components/filter-card'
import { PageTitle } from '../components/shell'
import { GenerateKeyChainForm } from './key-chain-form'
import { ExternalKeyChainForm, ImportKeyChainForm } from './key-chain-source-forms'
import { keyChainsApi } from './key-chains-api'

/** The ways to make a key chain (`source`), each a dialog with its form. */
const SOURCES = {
  generate: { title: 'Generate key chain', Form: GenerateKeyChainForm },
  import: { title: 'Import key chain', Form: ImportKeyChainForm },
  external: { title: 'Register external key chain', Form: ExternalKeyChainForm },
} as const

/**
 * Key chains of the active tenant: list, generate, import, register external ones; the detail
 * page shows, edits, rotates, deletes.
 */
export default function KeyChainsPage() {
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const keyChains = keyChainsApi(session.api, tenantId)
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const pages = useCursorPages(['key-chains', tenantId], keyChains.list)
  const search = useSearch(pages.query.data?.items)
  const [creating, setCreating] = useState<keyof typeof SOURCES>()
  const close = () => setCreating(undefined)
  const source = creating && SOURCES[creating]
  return (
    <Stack>
      <PageTitle title={`Key chains of ${tenantId}`}>
        {canWrite(session, 'key-chains') &&
          (Object.keys(SOURCES) as (keyof typeof SOURCES)[]).map((name) => (
            <Button
              key={name}
              variant={name === 'generate' ? 'filled' : 'default'}
              onClick={() => setCreating(name)}
            >
              {SOURCES[name].title}
            </Button>
          ))}
      </PageTitle>
      <FilterCard label="Search key chains" search={search} />
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
          {search.items.map((keyChain) => (
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
      <Modal opened={source !== undefined} onClose={close} title={source?.title} size="lg">
        {source && (
          <source.Form
            create={keyChains.create}
            onCreated={(keyChain: KeyChain) => {
              close()
              void queryClient.invalidateQueries({ queryKey: ['key-chains', tenantId] })
              navigate(`/key-chains/${encodeURIComponent(keyChain.id)}`)
            }}
          />
        )}
      </Modal>
    </Stack>
  )
}
