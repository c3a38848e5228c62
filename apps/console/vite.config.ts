import react from '@vitejs/plugin-react'
import { defaultClientConditions, defineConfig } from 'vite'

/**
 * The admin console: static files served by the management process under `/console/`
 * (apps/management/src/routes/console.ts). BUILD_OUTDIR: the tests' build goes to `dist-test`
 * (scripts/test-bundles.ts), as the apps' bundles do.
 */
export default defineConfig({
  base: '/console/',
  plugins: [react()],
  // The SDK's sources, not its dist/ (packages/sdk/package.json, tsconfig.base.json).
  resolve: { conditions: ['@credential-service/source', ...defaultClientConditions] },
  build: {
    outDir: process.env.BUILD_OUTDIR || 'dist',
    emptyOutDir: true,
    // The Content-Security-Policy allows no inline script or style: no data: URLs for modules.
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    sourcemap: false,
    target: 'es2022',
    // scripts/build.mjs checks the budget that matters: the initial JavaScript, gzipped.
    chunkSizeWarningLimit: 1000,
  },
})
