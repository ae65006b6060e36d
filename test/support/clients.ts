/** Two API clients, so that tests can show one never sees or blocks the other's keys. */
export const ALICE = { clientId: 'alice', token: 'alice-token-0123456789abcdef' } as const;
export const BOB = { clientId: 'bob', token: 'bob-token-0123456789abcdef00' } as const;
export const TEST_API_TOKENS = `${ALICE.clientId}:${ALICE.token},${BOB.clientId}:${BOB.token}`;

export type TestClient = typeof ALICE | typeof BOB;
