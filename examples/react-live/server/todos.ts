import type { Redis } from 'ioredis';

/** A todo as the API sends it; `pending` marks an optimistic row in the page only. */
export interface Todo {
  id: number;
  title: string;
  pending?: boolean;
}

export interface NewTodo {
  title: string;
}

/** Where the todos live: one process's memory, or Redis (shared by every instance). */
export interface TodoStore {
  list(): Promise<Todo[]>;
  add(title: string): Promise<Todo>;
  /** False when there was no such todo. */
  remove(id: number): Promise<boolean>;
}

export function memoryTodos(titles: string[]): TodoStore {
  let nextId = 1;
  let todos: Todo[] = titles.map((title) => ({ id: nextId++, title }));
  return {
    list: async () => todos,
    async add(title) {
      const todo = { id: nextId++, title };
      todos = [...todos, todo];
      return todo;
    },
    async remove(id) {
      const before = todos.length;
      todos = todos.filter((t) => t.id !== id);
      return todos.length < before;
    },
  };
}

/** Todos in a Redis hash (`<key>` id -> title) with a counter (`<key>:next`) for ids. */
export async function redisTodos(redis: Redis, key: string, titles: string[]): Promise<TodoStore> {
  // The first instance seeds the list; the others find it there.
  if ((await redis.setnx(`${key}:next`, 0)) === 1) {
    for (const title of titles) await redis.hset(key, await redis.incr(`${key}:next`), title);
  }
  return {
    async list() {
      const all = await redis.hgetall(key);
      return Object.entries(all)
        .map(([id, title]) => ({ id: Number(id), title }))
        .sort((a, b) => a.id - b.id);
    },
    async add(title) {
      const id = await redis.incr(`${key}:next`);
      await redis.hset(key, id, title);
      return { id, title };
    },
    async remove(id) {
      return (await redis.hdel(key, String(id))) === 1;
    },
  };
}
