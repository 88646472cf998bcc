// Catalog errors carry the REST envelope fields the gateway returns unchanged.
export class CatalogError extends Error {
  constructor(
    readonly code: number,
    readonly status: string,
    readonly reason: string,
    message: string,
  ) {
    super(message);
  }
}

export const notFound = (what: string): CatalogError => new CatalogError(404, 'notFound', 'notFound', `Not found: ${what}`);
export const alreadyExists = (what: string): CatalogError => new CatalogError(409, 'alreadyExists', 'duplicate', `Already Exists: ${what}`);
export const invalid = (message: string): CatalogError => new CatalogError(400, 'invalid', 'invalid', message);
export const notImplemented = (message: string): CatalogError => new CatalogError(501, 'notImplemented', 'notImplemented', message);
