import type { Command, Redis } from 'ioredis';

/** What ioredis sends on connect, before 'ready' (its ready check, SETNAME, SETINFO are off). */
const HANDSHAKE = new Set(['auth', 'select']);
/** A refused AUTH ioredis goes on after (with a warning): the server wants no password. */
const NO_PASSWORD = /no password is set|without any password configured|wrong number of arguments/;

type Stream = Parameters<Redis['sendCommand']>[1];

/** One connection (socket) of `conn` and its AUTH and SELECT replies. */
interface Shake {
  socket: unknown;
  steps: Promise<void>[];
  /** All answered OK: commands go. */
  ok: boolean;
  answered?: Promise<void>;
}

/** See {@link holdUntilAnswered}. */
export interface AnswerGate {
  /**
   * Undefined when commands may be sent now (or fail at once: the connection is down), else
   * a promise that resolves once Redis answered the connection's AUTH and SELECT, or rejects with
   * the refusal.
   */
  held(): Promise<void> | undefined;
}

/**
 * Holds `conn`'s commands until Redis has answered its AUTH (and SELECT): without ioredis's
 * ready check, ioredis declares a connection ready as soon as its AUTH is written, so a command
 * could follow it before the answer; Redis would run it as the `default` user when that AUTH is
 * refused (a rotated password) and `default` is on, and in db 0 when SELECT is refused. A
 * command sent meanwhile is rejected; `held()` says when to send. `answered` is called once per
 * connection whose handshake was answered OK. A refused SELECT (ioredis keeps that connection)
 * reconnects it. The ready check (an INFO, also sent before AUTH is answered) and CLIENT
 * SETNAME/SETINFO (redis/ioredis#2099) are not used for this: see `own` in streams.ts.
 */
export function holdUntilAnswered(conn: Redis, answered: () => void): AnswerGate {
  let shake: Shake = { socket: undefined, steps: [], ok: false };
  const current = (): Shake => {
    if (shake.socket !== conn.stream) shake = { socket: conn.stream, steps: [], ok: false };
    return shake;
  };
  /** Called once the handshake's commands were sent (they go out together, on connect). */
  const seal = (s: Shake): Promise<void> => {
    if (s.answered === undefined) {
      s.answered = Promise.all(s.steps).then(() => {
        s.ok = true;
        if (s === shake) answered();
      });
      // Awaited by whoever sends next, if any.
      s.answered.catch(() => {});
    }
    return s.answered;
  };
  const send = conn.sendCommand.bind(conn);
  // The one place every command (pipelines, MULTI too) goes through; ioredis's own monitor mode
  // overrides it the same way.
  conn.sendCommand = (command: Command, stream?: Stream): unknown => {
    const s = current();
    if (s.ok) return send(command, stream);
    const status = conn.status;
    if (status === 'connect' && HANDSHAKE.has(command.name)) {
      const reply = send(command, stream);
      s.steps.push(
        command.promise.then(
          () => {},
          (error: unknown) => {
            if (command.name === 'auth' && NO_PASSWORD.test(String(error))) return;
            // ioredis closes a connection whose AUTH was refused, not one whose SELECT was.
            if (command.name === 'select' && conn.stream === s.socket) conn.disconnect(true);
            throw error;
          },
        ),
      );
      return reply;
    }
    // Down: ioredis refuses it at once (no offline queue).
    if (status !== 'ready' && status !== 'connect') return send(command, stream);
    command.reject(
      new Error("keel: Redis has not answered this connection's AUTH yet; nothing is sent before"),
    );
    return command.promise;
  };
  // Emitted a tick after ioredis set the status: that connection may be gone by now.
  conn.on('ready', () => {
    if (conn.status === 'ready') void seal(current());
  });
  return {
    held() {
      const s = current();
      if (s.ok || (conn.status !== 'ready' && conn.status !== 'connect')) return undefined;
      return seal(s);
    },
  };
}
