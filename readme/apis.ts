import { delay, HttpResponse, http } from 'msw';

/**
 * The APIs the runnable README blocks talk to, served by msw in the test (no network): the core
 * README's `https://api.example.com` and the React README's `/api` on the page's origin.
 */
export function exampleApis() {
  let todos = [
    { id: 1, title: 'Read the README' },
    { id: 2, title: 'Try keel' },
  ];
  const users = [{ id: 1, name: 'Ada' }];
  // The core README's token refresh, with rotating refresh tokens as OAuth servers issue them:
  // each refresh answers a new access token and a new refresh token, and a refresh token used
  // twice is refused (reuse detection), so a client that refreshed once per request fails.
  let issued = 0;
  return [
    http.post('https://api.example.com/token', async ({ request }) => {
      const { refresh } = (await request.json()) as { refresh?: string };
      if (refresh !== `r${issued}`) {
        return HttpResponse.json({ message: 'refresh token reused' }, { status: 401 });
      }
      issued++;
      return HttpResponse.json({ access: `t${issued}`, refresh: `r${issued}` });
    }),
    http.get('https://api.example.com/me', ({ request }) =>
      issued > 0 && request.headers.get('authorization') === `Bearer t${issued}`
        ? HttpResponse.json(users[0])
        : HttpResponse.json({ message: 'token expired' }, { status: 401 }),
    ),
    http.get('https://api.example.com/users', () => HttpResponse.json(users)),
    http.get('https://api.example.com/users/:id', ({ params }) =>
      params.id === '0'
        ? HttpResponse.json({ message: 'No such user' }, { status: 404 })
        : HttpResponse.json(users[0]),
    ),
    http.post('https://api.example.com/users', async ({ request }) =>
      HttpResponse.json({ id: 2, ...((await request.json()) as object) }, { status: 201 }),
    ),
    http.get('https://api.example.com/report', async () => {
      await delay(50);
      return HttpResponse.json({ rows: [] });
    }),
    http.get('*/api/todos', () => HttpResponse.json(todos)),
    // The core README's server side: the API on an internal address.
    http.get('http://127.0.0.1:8080/api/todos', () => HttpResponse.json(todos)),
    http.post('*/api/todos', async ({ request }) => {
      const todo = { id: todos.length + 1, ...((await request.json()) as { title: string }) };
      todos = [...todos, todo];
      return HttpResponse.json(todo, { status: 201 });
    }),
    // A live stream that says hello and stays open until the page leaves.
    http.get('*/api/events', () => {
      const stream = new ReadableStream({
        start(controller) {
          controller.enqueue(new TextEncoder().encode(': hello\n\n'));
        },
      });
      return new HttpResponse(stream, { headers: { 'content-type': 'text/event-stream' } });
    }),
  ];
}
