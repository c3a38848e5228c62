import { ConfigError } from '@credential-service/server-kit'
import { type OperatorConfig, parseOperatorConfig } from '../config'

/** Exit status of an operator command whose environment is unusable (1 means findings/rejections). */
export const CONFIG_ERROR_EXIT = 2

/**
 * The operator command's configuration, or exit with status 2 and every offending variable
 * named. A missing MASTER_SECRET says why none is generated.
 */
export function operatorConfigOrExit(command: string): OperatorConfig {
  try {
    return parseOperatorConfig(process.env)
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error
    console.error(`${command}: ${error.message}`)
    if (error.issues.some((issue) => issue.startsWith('MASTER_SECRET is required'))) {
      console.error(
        `${command} never generates MASTER_SECRET: set it to the secret the service runs with ` +
          '(`npm start` keeps the one it generated in <DATA_DIR>/dev-secrets.json, read when DATABASE_URL is unset)',
      )
    }
    process.exit(CONFIG_ERROR_EXIT)
  }
}
