// Messages between the service instances that share one storage: what one
// instance's job hub publishes reaches the SSE streams and `/ws` peers of the
// others. Optional: a storage one process owns (memory, SQLite) has none, and
// its hub stays in process. Delivery is live only: no replay, no history; a
// subscriber that may have missed messages is told so (`onLive` again) and
// re-reads what it shows from the rows, which stay the source of truth.

export interface EventBus {
  /**
   * Sends `payload` to the subscribers of `channel` on every other instance
   * (never back to this one: its hub has delivered it already). Any size up
   * to the bus's bound: a payload too large for the transport travels by
   * reference. Messages one caller publishes on a channel, each awaited
   * before the next, arrive in that order.
   */
  publish(channel: string, payload: string): Promise<void>;
  /**
   * Hears the other instances' messages on `channel` until the returned
   * function is called. `onLive` runs once the subscription hears every
   * later message, and again after each time it may have missed some (a
   * lost connection, a payload that could not be fetched): the subscriber
   * then re-reads the state the messages would have told it.
   */
  subscribe(channel: string, listener: (payload: string) => void, onLive?: () => void): () => void;
  /** Reports trouble the bus recovers from by itself (a lost connection, a failed reconnect), for the log. */
  onError?(listener: (err: unknown) => void): () => void;
  /** Stops listening and lets go of connections; publishes under way finish first. Safe to call more than once. */
  close(): Promise<void>;
}
