/**
 * The tag of everything derived from the todo list (the list and the stats): a change
 * invalidates it, in this tab (the mutations) and in the others (the server's
 * `hub.invalidate(['todos'])`).
 */
export const TODOS = ['todos'];
