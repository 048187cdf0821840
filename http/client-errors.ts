// Refusals node:http answers before Koa sees a request (oversized headers, a
// malformed request line or header, a request too slow to arrive) written as
// Status bodies on the raw socket. No request or response object exists here.
import http from 'node:http';
import type { Socket } from 'node:net';
import type { Logger } from 'pino';
import { ApiError, DeadlineExceededError, InvalidArgumentError } from '../src/errors';
import { newUlid } from '../src/ids';

/** A refusal of the HTTP parser or of the server's timeouts, with the HTTP status written. */
export interface ClientErrorAnswer {
  httpStatus: number;
  error: ApiError;
}

/** The limits a refusal's message names. */
export interface ClientErrorLimits {
  maxHeaderSize: number;
  headersTimeoutMs: number;
  requestTimeoutMs: number;
}

/** A connection error node:http passes to `clientError`: llhttp errors carry `code` HPE_* and `reason`. */
interface ClientError extends Error {
  code?: string;
  reason?: string;
}

function fieldError(field: string, description: string): InvalidArgumentError {
  return InvalidArgumentError.forField(field, description);
}

/**
 * The Status body and HTTP status answering a client error, or null when
 * nothing should be written (the peer reset or aborted the connection).
 * Codes: oversized headers 431 and an oversized chunk extension 413 are
 * INVALID_ARGUMENT like the other size refusals (413 body, 415 content type);
 * a parse error is 400 INVALID_ARGUMENT; a request that does not arrive in
 * time is 408 DEADLINE_EXCEEDED (the deadline passed, on the client's side).
 * Messages name the problem and the limit, never the bytes received.
 */
export function clientErrorAnswer(error: ClientError, limits: ClientErrorLimits): ClientErrorAnswer | null {
  switch (error.code) {
    case 'ECONNRESET':
    case 'HPE_CLOSED_CONNECTION':
      return null;
    case 'HPE_HEADER_OVERFLOW':
      return { httpStatus: 431, error: fieldError('(headers)', `request line and headers exceed the ${limits.maxHeaderSize}-byte limit`) };
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return { httpStatus: 413, error: fieldError('(body)', 'chunk extensions exceed the size limit') };
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return {
        httpStatus: 408,
        error: new DeadlineExceededError(`request not received in time: headers must arrive within ${limits.headersTimeoutMs} ms and the whole request within ${limits.requestTimeoutMs} ms`),
      };
    default:
      return { httpStatus: 400, error: fieldError('(request)', `malformed HTTP request: ${parserReason(error)}`) };
  }
}

/** llhttp's reason ("Invalid method encountered") is a fixed text; anything else is not repeated. */
function parserReason(error: ClientError): string {
  if (error.code?.startsWith('HPE_') && error.reason && /^[\w .,'-]{1,100}$/.test(error.reason)) return error.reason;
  return 'the request could not be parsed';
}

const REASON_PHRASES: Record<number, string> = {
  400: 'Bad Request',
  408: 'Request Timeout',
  413: 'Payload Too Large',
  431: 'Request Header Fields Too Large',
};

/** A complete HTTP/1.1 response closing the connection, with the Status body. */
export function rawResponse(answer: ClientErrorAnswer, requestId: string): string {
  const body = JSON.stringify(answer.error.toStatus());
  return [
    `HTTP/1.1 ${answer.httpStatus} ${REASON_PHRASES[answer.httpStatus] ?? 'Error'}`,
    'Content-Type: application/json; charset=utf-8',
    `Content-Length: ${Buffer.byteLength(body)}`,
    `X-Request-Id: ${requestId}`,
    'Connection: close',
    '',
    body,
  ].join('\r\n');
}

/** What node:http keeps on a server and on a socket serving a request. */
interface ServerInternals { maxHeaderSize?: number }
interface ServingSocket extends Socket {
  _httpMessage?: { headersSent?: boolean } | null;
}

/**
 * How long an answered connection may stay open for the client to read the
 * answer: destroying it at once, with request bytes still unread, makes the
 * kernel send a reset that can overtake the answer.
 */
export const ANSWERED_LINGER_MS = 1_000;

/**
 * Answers node:http's client errors with Status bodies, in place of Node's bare
 * `HTTP/1.1 431` (or 400, 408) with no body. Like Node's own answer, nothing is
 * written once a response has started on the connection or the socket can no
 * longer be written; the connection then closes (at the latest
 * ANSWERED_LINGER_MS after the answer).
 * @example handleClientErrors(http.createServer(app.callback()), logger)
 */
export function handleClientErrors<T extends http.Server>(server: T, logger?: Logger): T {
  const answered = new WeakSet<Socket>();
  server.on('clientError', function answerClientError(error: ClientError, socket: ServingSocket) {
    // The parser reports its error again for every later chunk of the same connection.
    if (answered.has(socket)) return;
    answered.add(socket);
    const answer = clientErrorAnswer(error, {
      maxHeaderSize: (server as ServerInternals).maxHeaderSize ?? http.maxHeaderSize,
      headersTimeoutMs: server.headersTimeout,
      requestTimeoutMs: server.requestTimeout,
    });
    if (!answer || !socket.writable || socket._httpMessage?.headersSent === true) {
      socket.destroy();
      return;
    }
    const requestId = newUlid();
    logger?.info({ requestId, status: answer.httpStatus, reason: error.code }, 'request refused before routing');
    socket.end(rawResponse(answer, requestId));
    const linger = setTimeout(() => socket.destroy(), ANSWERED_LINGER_MS).unref();
    socket.once('close', () => clearTimeout(linger));
  });
  return server;
}
