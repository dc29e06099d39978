/** A todo as the API sends it; `pending` marks an optimistic row in the page only. */
export interface Todo {
  id: number;
  title: string;
  pending?: boolean;
}

export interface NewTodo {
  title: string;
}
