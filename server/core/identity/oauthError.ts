/**
 * OAuth's own error shape (RFC 6749 section 5.2, RFC 7591 section 3.2.2, RFC 8707): the OAuth
 * endpoints answer `{error, error_description}` rather than the service's `{error, message}` (SPEC
 * part 7 "Shape").
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'invalid_scope'
  | 'invalid_target'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'unsupported_response_type'
  | 'access_denied'
  | 'invalid_redirect_uri'
  | 'invalid_client_metadata'
  | 'temporarily_unavailable';

const STATUS: Partial<Record<OAuthErrorCode, number>> = { invalid_client: 401, temporarily_unavailable: 503 };

export class OAuthError extends Error {
  readonly code: OAuthErrorCode;

  constructor(code: OAuthErrorCode, description: string) {
    super(description);
    this.name = 'OAuthError';
    this.code = code;
  }

  get status(): number {
    return STATUS[this.code] ?? 400;
  }

  toResponseObject(): { error: OAuthErrorCode; error_description: string } {
    return { error: this.code, error_description: this.message };
  }
}
