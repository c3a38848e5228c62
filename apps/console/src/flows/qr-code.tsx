import { Alert } from '@mantine/core'
import { useEffect, useRef, useState } from 'react'
import { Busy } from '../components/busy'

/**
 * A URI as a QR code drawn on a canvas (no data: URL or inline SVG for the Content-Security-Policy
 * to allow). The `qrcode` library is loaded the first time a code is shown, so it stays out of the
 * console's initial JavaScript (the 250 KB budget, issue 22).
 */
export function QrCode({ value, label }: { value: string; label: string }) {
  const canvas = useRef<HTMLCanvasElement>(null)
  const [state, setState] = useState<'loading' | 'drawn' | 'failed'>('loading')
  useEffect(() => {
    let current = true
    setState('loading')
    import('qrcode')
      .then((module) => {
        // A CommonJS module: its exports are the default export.
        const qrcode = module.default
        if (current && canvas.current)
          return qrcode.toCanvas(canvas.current, value, { width: 256, margin: 2, errorCorrectionLevel: 'M' })
      })
      .then(
        () => current && setState('drawn'),
        () => current && setState('failed'),
      )
    return () => {
      current = false
    }
  }, [value])
  return (
    <>
      {state === 'loading' && <Busy size="sm" label="Drawing the QR code" />}
      {state === 'failed' && (
        <Alert color="red" role="alert">
          The QR code could not be drawn; use the link.
        </Alert>
      )}
      <canvas ref={canvas} role="img" aria-label={label} data-testid="qr-code" hidden={state !== 'drawn'} />
    </>
  )
}
