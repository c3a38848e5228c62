import type { KeyChain } from '@credential-service/sdk'
import {
  Alert,
  Anchor,
  Badge,
  Button,
  Card,
  Code,
  Group,
  Modal,
  SimpleGrid,
  Stack,
  Text,
  Title,
} from '@mantine/core'
import { useQuery, useQueryClient } from '@tanstack/react-query'
import { useState } from 'react'
import { Link, useNavigate, useParams } from 'react-router'
import { canWrite } from '../access'
import { useSession } from '../auth/auth'
import { parseCertificate } from '../certificates/parse-certificate'
import { Busy } from '../components/busy'
import { ConfirmButton } from '../components/confirm-button'
import { PageTitle } from '../components/shell'
import { describeError } from '../forms/problems'
import { EditKeyChainForm, RotateExternalForm } from './key-chain-edit'
import { downloadPem, keyChainsApi } from './key-chains-api'

/** One key chain: its keys and certificate chains (public material only), edit, rotate, delete. */
export default function KeyChainDetailPage() {
  const { keyChainId = '' } = useParams()
  const session = useSession()
  const tenantId = session.activeTenant ?? ''
  const keyChains = keyChainsApi(session.api, tenantId)
  const queryClient = useQueryClient()
  const navigate = useNavigate()
  const key = ['key-chains', tenantId, 'detail', keyChainId]
  const keyChain = useQuery({ queryKey: key, queryFn: () => keyChains.get(keyChainId) })
  const writable = canWrite(session, 'key-chains')
  const [dialog, setDialog] = useState<'edit' | 'rotate'>()

  if (keyChain.isPending) return <Busy label="Loading the key chain" />
  if (keyChain.isError)
    return (
      <Alert color="red" title={`Key chain ${keyChainId}`} role="alert">
        {describeError(keyChain.error)}{' '}
        <Anchor component={Link} to="/key-chains">
          All key chains
        </Anchor>
      </Alert>
    )
  const chain = keyChain.data
  const saved = (changed: KeyChain) => {
    setDialog(undefined)
    queryClient.setQueryData(key, changed)
    void queryClient.invalidateQueries({ queryKey: ['key-chains', tenantId] })
  }
  return (
    <Stack>
      <PageTitle title={`Key chain ${chain.id}`}>
        {chain.rootCertificate && (
          <Button
            variant="default"
            onClick={() => downloadPem(`${chain.id}-root.pem`, chain.rootCertificate ?? '')}
          >
            Download root certificate
          </Button>
        )}
        {writable && (
          <>
            <Button variant="default" size="sm" onClick={() => setDialog('edit')}>
              Edit
            </Button>
            {chain.kmsProvider === 'db' ? (
              <ConfirmButton
                label="Rotate now"
                color="blue"
                size="sm"
                title={`Rotate key chain ${chain.id}?`}
                message="A new active key (and certificate) is made now; the current key stays published for verification through the grace period."
                onConfirm={async () => queryClient.setQueryData(key, await keyChains.rotate(chain.id, {}))}
                onDone={() => void queryClient.invalidateQueries({ queryKey: ['key-chains', tenantId] })}
              />
            ) : (
              // External key chains name their new key, made in the provider beforehand.
              <Button color="blue" variant="light" size="sm" onClick={() => setDialog('rotate')}>
                Rotate now
              </Button>
            )}
            <ConfirmButton
              label="Delete"
              size="sm"
              title={`Delete key chain ${chain.id}?`}
              message="Its keys are destroyed: credentials it signed can no longer be checked against its published keys, and configurations that use it stop issuing. This cannot be undone."
              onConfirm={() => keyChains.remove(chain.id)}
              onDone={() => {
                queryClient.removeQueries({ queryKey: key })
                void queryClient.invalidateQueries({ queryKey: ['key-chains', tenantId] })
                navigate('/key-chains')
              }}
            />
          </>
        )}
      </PageTitle>
      <Modal
        opened={dialog !== undefined}
        onClose={() => setDialog(undefined)}
        title={dialog === 'edit' ? `Edit key chain ${chain.id}` : `Rotate key chain ${chain.id}?`}
        size="lg"
      >
        {dialog === 'edit' && (
          <EditKeyChainForm
            keyChain={chain}
            update={(body) => keyChains.update(chain.id, body)}
            onSaved={saved}
          />
        )}
        {dialog === 'rotate' && (
          <RotateExternalForm
            keyChain={chain}
            rotate={(body) => keyChains.rotate(chain.id, body)}
            onRotated={saved}
            onCancel={() => setDialog(undefined)}
          />
        )}
      </Modal>
      <Summary chain={chain} />
      <Title order={2} size="h3">
        Active key
      </Title>
      <Text size="sm">
        Key id (RFC 7638 thumbprint) <Code>{chain.activeKey.kid}</Code>
      </Text>
      <CertificateChain pems={chain.activeKey.certificateChain} label="Certificate chain of the active key" />
      {chain.rootCertificate && (
        <CertificateChain
          pems={[chain.rootCertificate]}
          label="Root certificate (trust anchor, not in x5c)"
        />
      )}
      {chain.previousKey && (
        <>
          <Title order={2} size="h3">
            Previous key, published until {new Date(chain.previousKey.expiresAt).toLocaleString()}
          </Title>
          <CertificateChain
            pems={chain.previousKey.certificateChain}
            label="Certificate chain of the previous key"
          />
        </>
      )}
    </Stack>
  )
}

function Summary({ chain }: { chain: KeyChain }) {
  const rows: [string, React.ReactNode][] = [
    ['Description', chain.description ?? '—'],
    ['Provider', chain.externalKeyId ? `${chain.kmsProvider} (${chain.externalKeyId})` : chain.kmsProvider],
    ['Algorithm', chain.algorithm],
    [
      'Certificate',
      <Badge key="mode" variant="light">
        {chain.certificateMode}
      </Badge>,
    ],
    [
      'Rotation',
      chain.rotationPolicy.enabled
        ? `every ${chain.rotationPolicy.intervalDays} days, grace ${chain.rotationPolicy.gracePeriodDays} days`
        : `manual, grace ${chain.rotationPolicy.gracePeriodDays} days`,
    ],
    ['Last rotated', chain.rotatedAt ? new Date(chain.rotatedAt).toLocaleString() : 'never'],
    ['Next rotation', chain.nextRotationAt ? new Date(chain.nextRotationAt).toLocaleString() : '—'],
  ]
  return (
    <SimpleGrid cols={{ base: 1, sm: 2 }} spacing="xs" component="dl">
      {rows.map(([term, value]) => (
        <Group key={term} gap="xs">
          <Text component="dt" fw={600} size="sm">
            {term}
          </Text>
          <Text component="dd" size="sm" m={0}>
            {value}
          </Text>
        </Group>
      ))}
    </SimpleGrid>
  )
}

/** The certificates of a chain, leaf first, each read in the browser (parse-certificate.ts). */
function CertificateChain({ pems, label }: { pems: string[]; label: string }) {
  const details = useQuery({
    queryKey: ['certificates', ...pems],
    queryFn: () => Promise.all(pems.map(parseCertificate)),
    staleTime: Number.POSITIVE_INFINITY,
  })
  if (pems.length === 0) return <Text c="dimmed">No certificate.</Text>
  return (
    <section aria-label={label}>
      <Text fw={600} size="sm" mb="xs">
        {label}
      </Text>
      {details.isError && (
        <Alert color="yellow" title="Certificate not readable">
          {describeError(details.error)}
        </Alert>
      )}
      <Stack gap="xs">
        {details.data?.map((certificate, index) => (
          <Card key={certificate.sha256} withBorder padding="sm" data-testid="certificate">
            <Text size="sm" fw={600}>
              {index === 0 && pems.length > 1 ? 'Leaf: ' : ''}
              {certificate.subject}
            </Text>
            <Text size="sm">
              Issuer: {certificate.issuer}
              {certificate.selfIssued ? ' (self-issued)' : ''}
            </Text>
            <Text size="sm">
              Valid {certificate.notBefore.toLocaleString()} to {certificate.notAfter.toLocaleString()}
            </Text>
            <Text size="sm">Serial number: {certificate.serialNumber}</Text>
            {certificate.isCa !== undefined && <Text size="sm">CA: {certificate.isCa ? 'yes' : 'no'}</Text>}
            {certificate.subjectAltNames.length > 0 && (
              <Text size="sm">Subject alternative names: {certificate.subjectAltNames.join(', ')}</Text>
            )}
            <Text size="xs" c="dimmed" style={{ wordBreak: 'break-all' }}>
              SHA-256 {certificate.sha256}
            </Text>
          </Card>
        ))}
      </Stack>
    </section>
  )
}
