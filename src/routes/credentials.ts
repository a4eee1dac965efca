/**
 * The API token of a request to the InfluxDB 1.x and Prometheus query routes, however
 * the client sends it. Grafana's data sources and InfluxDB 1.x clients do not all send
 * `Authorization: Bearer`: InfluxDB 1.x takes a user and password as the `u` and `p`
 * query parameters or as Basic authentication, InfluxDB 2.x clients send
 * `Authorization: Token <token>`, and Grafana's Prometheus data source sends Basic
 * authentication or any header configured. Here the password (or the user, when the
 * password is empty) is the token: a user name is not needed and not checked.
 */

/** The token of a Basic `Authorization` header: the password, or the user when there is no password; null for another scheme. */
function basicToken(header: string): string | null {
  const match = /^\s*Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (match === null) return null;
  const text = Buffer.from(match[1]!, 'base64').toString('utf8');
  const colon = text.indexOf(':');
  const user = colon === -1 ? text : text.slice(0, colon);
  const password = colon === -1 ? '' : text.slice(colon + 1);
  return password !== '' ? password : user;
}

/**
 * The `Authorization` header to authenticate `request` with (`Bearer <token>`, which
 * the authenticator checks as for GraphQL), or null when it carries no credentials:
 * `Authorization: Bearer <token>` or `Token <token>` as sent; `Basic` with the token as
 * password (or as user); else the `p` query parameter (or `u` when `p` is absent), as
 * InfluxDB 1.x clients send a password.
 */
export function authorizationOf(request: Request, url: URL): string | null {
  const header = request.headers.get('authorization');
  if (header !== null && header.trim() !== '') {
    const basic = basicToken(header);
    if (basic !== null) return `Bearer ${basic}`;
    return header.replace(/^\s*Token\s+/i, 'Bearer ');
  }
  const password = url.searchParams.get('p') || url.searchParams.get('u');
  return password ? `Bearer ${password}` : null;
}

/** A request carrying only `authorization` (for the route authenticator, which reads the header). */
export function withAuthorization(authorization: string | null): Request {
  return new Request('http://tsgraph.invalid/', { headers: authorization === null ? {} : { authorization } });
}
