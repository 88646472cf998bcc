// ArrayScanRel lives beside UNNEST (same element-to-row logic).
export { arrayScanOp } from './unnest.js';
