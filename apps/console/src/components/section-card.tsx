import { Card, Stack, Title } from '@mantine/core'

/** A titled card of a page that shows one resource in parts (registrar, federation). */
export function SectionCard({ title, children }: { title: string; children: React.ReactNode }) {
  return (
    <Card withBorder>
      <Stack>
        <Title order={2} size="h4">
          {title}
        </Title>
        {children}
      </Stack>
    </Card>
  )
}
