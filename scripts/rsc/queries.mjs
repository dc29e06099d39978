// A query named once, as an app shares it between the Server Component that prefetches it and
// the client component that reads it: no directive, so each side runs it. On the server,
// `queryOptions` must be a function a Server Component can call, not a client reference.
import { queryOptions } from '@keel/react';

export const todosQuery = queryOptions('/todos', {
  params: { done: false },
  refetchOnWindowFocus: false,
});
