// React's own Server Components loader for Node: a module marked 'use client' is replaced by
// client references (what Next.js's or Vite's RSC bundler does), so the server never runs it.
// It reads module sources as strings, as Node's loader gave them before Node 20 (now bytes):
// a hook registered before it, so it runs after it in the chain, hands it strings.
import { register } from 'node:module';

register('./source-as-string.mjs', import.meta.url);
register('react-server-dom-webpack/node-loader', import.meta.url);
