// What a Server Component calls itself: plain functions, no React. Under the `react-server`
// condition @keel/react serves these from this module (dist/react-server.js, written by
// tsup.config.ts) and every other export as a client reference; the client entry exports them
// from here too.
export { dehydrate, hydrate } from '@keel/core';
export { keepPreviousData } from './query/hook-options';
export { type QueryDefinition, queryOptions } from './query-options';
