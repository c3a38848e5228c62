import { runProcess } from '@credential-service/server-kit'
import { startupBanner } from './banner'
import { composeApps } from './compose'
import { parseAllInOneConfig } from './config'

await runProcess({
  name: 'all-in-one',
  parseConfig: parseAllInOneConfig,
  allowEmbeddedDatabase: true,
  build: composeApps,
  onListening: (config) => {
    console.log(startupBanner(config, process.env))
  },
})
