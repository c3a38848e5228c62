import { Alert, Button, Code, Stack, Text, TextInput } from '@mantine/core'
import { useQuery } from '@tanstack/react-query'
import { useState } from 'react'
import { useSession } from '../auth/auth'
import { Busy } from '../components/busy'
import { downloadText } from '../components/download'
import { PageTitle } from '../components/shell'
import { describeError } from '../forms/problems'

/**
 * `GET /api/metrics`: the Prometheus text of the process that answers (a tenant-bound client sees
 * its tenant's series only), filtered by a word in the browser.
 */
export default function MetricsPage() {
  const { api } = useSession()
  const [filter, setFilter] = useState('')
  const metrics = useQuery({ queryKey: ['metrics'], queryFn: () => api.getMetrics() })
  const lines = (metrics.data ?? '').split('\n').filter((line) => line !== '')
  const word = filter.trim()
  const shown = word ? lines.filter((line) => line.includes(word)) : lines
  const samples = shown.filter((line) => !line.startsWith('#')).length
  return (
    <Stack>
      <PageTitle title="Metrics">
        <Button variant="default" loading={metrics.isFetching} onClick={() => void metrics.refetch()}>
          Refresh
        </Button>
        <Button
          variant="default"
          disabled={!metrics.data}
          onClick={() => downloadText('metrics.txt', metrics.data ?? '', 'text/plain')}
        >
          Download
        </Button>
      </PageTitle>
      <Text c="dimmed" size="sm">
        Each process answers for itself: behind a load balancer this is one replica's view (docs/metrics.md).
      </Text>
      {metrics.isPending && <Busy label="Loading the metrics" />}
      {metrics.isError && (
        <Alert color="red" title="Could not load the metrics" role="alert">
          {describeError(metrics.error)}
        </Alert>
      )}
      {metrics.data !== undefined && (
        <>
          <TextInput
            label="Only lines containing"
            placeholder="e.g. http_requests_total"
            value={filter}
            onChange={(event) => setFilter(event.currentTarget.value)}
            maw={400}
          />
          <Text size="sm" data-testid="metrics-count">
            {samples} samples
          </Text>
          <Code
            block
            tabIndex={0}
            aria-label="Prometheus metrics"
            data-testid="metrics-text"
            style={{ maxHeight: '70vh', overflow: 'auto' }}
          >
            {shown.join('\n')}
          </Code>
        </>
      )}
    </Stack>
  )
}
