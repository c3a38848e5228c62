import { randomBytes } from 'node:crypto'

/** What the presentation login page shows: both requests, and where the page asks how it went. */
export interface PresentationPage {
  /** The tenant's issuer display name. */
  title: string
  /** The cross-device request, rendered as a QR code for a wallet on another device. */
  crossDeviceUri: string
  /** The same-device request, a link that opens the wallet on this device. */
  sameDeviceUri: string
  /** The status endpoint the page polls (bound to the login cookie). */
  statusUrl: string
}

/**
 * The class of a failed presentation's reason, for the holder's page (the whole reason is in the
 * presentation session, for the operator).
 */
export function failureClass(reason: string | null): string {
  const text = (reason ?? '').toLowerCase()
  if (/revoked|suspended/.test(text)) return 'the credential is revoked or suspended'
  if (/trust|issuer|certificate|x5c|chain|signature/.test(text))
    return 'the credential’s issuer is not trusted'
  if (/(request|session)\b.*\bexpired/.test(text)) return 'the request expired'
  if (/claim|missing|dcql|query|match/.test(text)) return 'the credential does not hold the claims asked for'
  if (/access_denied|declined|wallet/.test(text)) return 'the wallet declined'
  return 'the presentation could not be verified'
}

/** An HTML answer with its headers. */
export interface HtmlAnswer {
  html: string
  headers: Record<string, string>
}

const escapeHtml = (text: string) =>
  text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] as string,
  )

/**
 * The headers of every page of the login: scripts and styles only by this answer's nonce, nothing
 * loaded from elsewhere, fetches to this origin only, never framed (clickjacking), never cached, no
 * Referer to the wallet's redirect (the code is in the URL).
 */
function pageHeaders(nonce: string): Record<string, string> {
  return {
    'content-type': 'text/html; charset=utf-8',
    'content-security-policy': [
      "default-src 'none'",
      `script-src 'nonce-${nonce}'`,
      `style-src 'nonce-${nonce}'`,
      "img-src 'self' data:",
      "connect-src 'self'",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
    'cache-control': 'no-store',
    'x-frame-options': 'DENY',
    'referrer-policy': 'no-referrer',
    'x-content-type-options': 'nosniff',
  }
}

const STYLE = `body{font-family:system-ui,sans-serif;max-width:36rem;margin:2rem auto;padding:0 1rem;color:#1a1a1a}
h1{font-size:1.4rem}.qr{width:18rem;max-width:100%;height:auto;display:block;margin:1rem 0;border:1px solid #ccc}
.button{display:inline-block;padding:.7rem 1.2rem;background:#1f4ea1;color:#fff;border-radius:.3rem;text-decoration:none}
.button:focus{outline:3px solid #f5a623;outline-offset:2px}code{word-break:break-all}[role=status]{margin-top:1.5rem;min-height:1.5rem}`

function page(
  nonce: string,
  title: string,
  body: string,
  script: string,
  data: Record<string, string>,
): HtmlAnswer {
  const attributes = Object.entries(data)
    .map(([name, value]) => ` data-${name}="${escapeHtml(value)}"`)
    .join('')
  const html = `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="referrer" content="no-referrer">
<title>${escapeHtml(title)}</title>
<style nonce="${nonce}">${STYLE}</style>
</head>
<body>
<main${attributes}>
${body}
</main>
<script nonce="${nonce}">${script}</script>
</body>
</html>`
  return { html, headers: pageHeaders(nonce) }
}

/**
 * The poller: asks the status endpoint every two seconds; on `done` or `failed` it follows the
 * redirect to the wallet (a code, or access_denied), showing why a presentation failed first.
 */
const POLL = `(function(){
var main=document.querySelector('main');var out=document.getElementById('status');
var url=main.getAttribute('data-status');var stopped=false;
function show(text){out.textContent=text}
function go(answer){stopped=true;if(answer.redirect){window.location.assign(answer.redirect)}}
function poll(){if(stopped)return;fetch(url,{credentials:'same-origin',cache:'no-store',headers:{accept:'application/json'}})
.then(function(r){return r.json()}).then(function(a){
if(a.status==='done'){show('Presentation verified. Returning to your wallet…');go(a)}
else if(a.status==='failed'){show('The presentation was not accepted: '+(a.reason||'it could not be verified')+'.');setTimeout(function(){go(a)},3000)}
else if(a.error){stopped=true;show('This login can no longer be finished here: '+(a.error_description||a.error)+'.')}
else{setTimeout(poll,2000)}}).catch(function(){setTimeout(poll,4000)})}
poll()})()`

/** The page of a presentation login (OpenID4VP 1.0: cross-device QR code, same-device link). */
export async function presentationPage(data: PresentationPage): Promise<HtmlAnswer> {
  const nonce = randomBytes(16).toString('base64')
  // Loaded on the first presentation login (issue 20: a fresh process stays small).
  const { default: QRCode } = await import('qrcode')
  const svg = (
    await QRCode.toString(data.crossDeviceUri, { type: 'svg', errorCorrectionLevel: 'M', margin: 2 })
  ).replace('<svg ', '<svg class="qr" role="img" aria-labelledby="qr-label" focusable="false" ')
  const body = `<h1>${escapeHtml(data.title)}</h1>
<p>To receive your credential, present a credential from your wallet.</p>
<section aria-labelledby="other-device">
<h2 id="other-device">Wallet on another device</h2>
<p id="qr-label">Scan this QR code with your wallet app.</p>
${svg}
<details>
<summary>Cannot scan the code?</summary>
<p>Copy this request into your wallet:</p>
<p><code id="cross-device-request">${escapeHtml(data.crossDeviceUri)}</code></p>
</details>
</section>
<section aria-labelledby="this-device">
<h2 id="this-device">Wallet on this device</h2>
<p><a class="button" id="same-device" href="${escapeHtml(data.sameDeviceUri)}">Open wallet on this device</a></p>
</section>
<p id="status" role="status" aria-live="polite">Waiting for your wallet…</p>`
  return page(nonce, data.title, body, POLL, { status: data.statusUrl })
}

/**
 * The same-device return (OpenID4VP 1.0 §13.3): the wallet's redirect carries the response code in
 * the fragment, which never reaches a server; the page posts it, with the login cookie, and follows
 * the answer to the wallet.
 */
export function returnPage(title: string, completeUrl: string, requestId: string): HtmlAnswer {
  const nonce = randomBytes(16).toString('base64')
  const script = `(function(){
var out=document.getElementById('status');var main=document.querySelector('main');
var code=new URLSearchParams(window.location.hash.slice(1)).get('response_code');
history.replaceState(null,'',window.location.pathname+window.location.search);
if(!code){out.textContent='The wallet sent no response code.';return}
fetch(main.getAttribute('data-complete'),{method:'POST',credentials:'same-origin',cache:'no-store',
headers:{'content-type':'application/json',accept:'application/json'},
body:JSON.stringify({request:main.getAttribute('data-request'),response_code:code})})
.then(function(r){return r.json()}).then(function(a){
if(a.redirect){out.textContent='Returning to your wallet…';window.location.assign(a.redirect)}
else{out.textContent='This login cannot be finished here: '+(a.error_description||a.error||'refused')+'.'}})
.catch(function(){out.textContent='The login could not be finished.'})})()`
  return page(
    nonce,
    title,
    `<h1>${escapeHtml(title)}</h1>\n<p id="status" role="status" aria-live="polite">Finishing your login…</p>`,
    script,
    { complete: completeUrl, request: requestId },
  )
}
