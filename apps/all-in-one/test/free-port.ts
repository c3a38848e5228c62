// Shared with the test worlds' bootstrap, which listens on such a port too.
export { freePort } from '@credential-service/management/testing'
