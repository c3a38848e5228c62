import { existsSync, readdirSync, readFileSync } from 'node:fs'

/** The parsed JSON of a file. */
export const readJson = (path: string) => JSON.parse(readFileSync(path, 'utf8')) as unknown

/** The `.json` files of a folder, sorted; none when the folder does not exist. */
export const jsonFiles = (dir: string) =>
  existsSync(dir)
    ? readdirSync(dir)
        .filter((f) => f.endsWith('.json'))
        .sort()
    : []
