// Credentials for real client libraries pointed at the emulator: a fixed
// token (the emulator parses and ignores it, spec §5), so no client probes
// for application-default credentials.
import { OAuth2Client } from 'google-auth-library';

export function fakeAuth(): OAuth2Client {
  const c = new OAuth2Client();
  c.setCredentials({ access_token: 'fake', expiry_date: Date.now() + 3600e3 });
  return c;
}
