import Foundation

/// How a ``URLSessionTransport`` keeps a body that its consumer is not pulling from filling memory.
enum URLSessionBackpressure: Sendable {
    /// Suspend the task and resume it once the consumer catches up (Apple platforms).
    case suspendTask
    /// Write the excess to an unlinked temporary file (Linux, where suspending restarts the request).
    case spillToFile
}

/// The life of one `URLSessionTask` as ``URLSessionTransportDelegate`` sees it: waiting for the head, buffering the
/// body for a consumer that pulls it, and ending once.
///
/// A plain value: every transition takes the event, changes the state and returns what the caller must do (resume a
/// continuation, suspend, resume or cancel the task, write to the spill file), so the rules can be tested without
/// URLSession. The delegate keeps one under its lock per task and acts on the returned action after releasing it.
///
/// Generic over what waits for the head (`Head`), what waits for the next body chunk (`Waiter`) and the file that
/// takes the bytes beyond the memory limit (`Spill`), so tests can use plain tokens.
///
/// Invariants: the head is delivered or failed exactly once; a body byte reaches the consumer once and in order
/// (buffered chunks, then the spill file, then what arrives while the consumer waits); at most one consumer waits at
/// a time; once cancelled nothing more is delivered and every later read throws ``CourierError/cancelled(context:)``.
struct URLSessionTaskStateMachine<Head, Waiter, Spill: AnyObject> {
    let maximumBufferedBytes: Int
    let backpressure: URLSessionBackpressure

    /// Waiting for the response head; `nil` before ``start(head:)`` and once the head is delivered or failed.
    private var head: Head?
    private(set) var headDelivered = false
    /// Cancelled from the Swift side (or the body was dropped): nothing more is delivered.
    private(set) var isCancelled = false
    /// Received body bytes not yet pulled, in order, before anything in `spill`.
    private var chunks: [Data] = []
    private var chunkIndex = 0
    private(set) var bufferedBytes = 0
    private(set) var isSuspended = false
    private var spill: (file: Spill, written: Int64, read: Int64)?
    /// The consumer waiting for the next chunk.
    private var waiter: Waiter?
    /// Set when the task completes.
    private(set) var outcome: Result<Void, CourierError>?
    /// An authentication challenge ended the task: its cancellation is the end of the (lost) body.
    private var endedByChallenge = false
    /// Set when the server failed the security policy: the task's error, instead of the cancellation.
    private var trustFailure: CourierError?
    /// URLSession began sending the request again without its body (see ``bodyNotResent()``).
    private(set) var lostBody = false

    /// The chunk size used when reading back a spill file.
    static var spillReadSize: Int { 64 * 1024 }

    init(maximumBufferedBytes: Int, backpressure: URLSessionBackpressure) {
        self.maximumBufferedBytes = max(1, maximumBufferedBytes)
        self.backpressure = backpressure
    }

    // MARK: Started, cancelled, dropped

    enum StartAction: Equatable {
        /// Resume the `URLSessionTask`; `head` will be answered.
        case resumeTask
        /// Cancelled before it started: forget the task and fail `head` with ``CourierError/cancelled(context:)``.
        case failCancelled
    }

    mutating func start(head: Head) -> StartAction {
        if isCancelled { return .failCancelled }
        self.head = head
        return .resumeTask
    }

    struct CancelAction {
        /// The task is still running: cancel it.
        var cancelTask: Bool
        /// Fail these with ``CourierError/cancelled(context:)``.
        var head: Head?
        var waiter: Waiter?
    }

    /// Cancelled from the Swift side; `nil` when it already was.
    mutating func cancel() -> CancelAction? {
        guard !isCancelled else { return nil }
        isCancelled = true
        defer {
            head = nil
            waiter = nil
            dropBuffered()
        }
        return CancelAction(cancelTask: outcome == nil, head: head, waiter: waiter)
    }

    enum DiscardAction: Equatable {
        /// The task is over: forget it.
        case forget
        /// The task is still running: cancel it (it is forgotten when it completes).
        case cancelTask
    }

    /// The consumer released the body.
    mutating func discard() -> DiscardAction {
        if outcome != nil { return .forget }
        isCancelled = true
        dropBuffered()
        return .cancelTask
    }

    private mutating func dropBuffered() {
        chunks = []
        chunkIndex = 0
        bufferedBytes = 0
        spill = nil
    }

    // MARK: The consumer reads

    enum ReadAction {
        /// Return this chunk; when `resumeTask`, the task was suspended and the buffer has drained to half the limit.
        case chunk(Data, resumeTask: Bool)
        /// Read `count` bytes at `offset` from the spill file and return them.
        case readSpill(Spill, offset: Int64, count: Int)
        /// The body is over (`nil` to the consumer) or failed; when `forget`, the task is no longer needed.
        case end(Result<Void, CourierError>, forget: Bool)
        /// Nothing yet; `waiter`, when given, was stored and will be answered.
        case wait
    }

    /// The consumer asks for the next chunk; `waiter` is stored if nothing is ready.
    mutating func read(waiter newWaiter: Waiter?) -> ReadAction {
        if isCancelled {
            return .end(.failure(.cancelled(context: CourierError.Context())), forget: false)
        }
        if chunkIndex < chunks.count {
            let chunk = chunks[chunkIndex]
            chunkIndex += 1
            if chunkIndex == chunks.count {
                chunks.removeAll(keepingCapacity: true)
                chunkIndex = 0
            }
            bufferedBytes -= chunk.count
            var resumeTask = false
            if isSuspended && bufferedBytes <= maximumBufferedBytes / 2 {
                isSuspended = false
                resumeTask = true
            }
            return .chunk(chunk, resumeTask: resumeTask)
        }
        if let (file, written, read) = spill, read < written {
            let count = Int(min(Int64(Self.spillReadSize), written - read))
            spill?.read += Int64(count)
            return .readSpill(file, offset: read, count: count)
        }
        if let outcome { return .end(outcome, forget: true) }
        if let newWaiter {
            // One reader at a time: a second one would strand the first.
            guard waiter == nil else {
                return .end(
                    .failure(
                        .requestFailed(underlyingError: ConcurrentBodyReadError(), context: CourierError.Context())),
                    forget: false)
            }
            waiter = newWaiter
        }
        return .wait
    }

    // MARK: URLSession reports

    enum HeadAction {
        /// Answer the head with the response.
        case deliver(Head)
        /// Nobody waits (cancelled, or a second head): cancel the task.
        case cancelTask
    }

    /// The final (non-interim) response head arrived.
    mutating func receivedHead() -> HeadAction {
        // An answer to a request that went out without its body is not the request's answer.
        guard !isCancelled, !lostBody, let head else { return .cancelTask }
        self.head = nil
        headDelivered = true
        return .deliver(head)
    }

    /// The response is not one the transport can deliver: whoever waits for the head is to be failed.
    mutating func failHead() -> Head? {
        defer { head = nil }
        return head
    }

    enum DataAction {
        /// Nothing to do (kept in memory, or nobody reads any more).
        case none
        /// The consumer was waiting with everything before read: give it these bytes.
        case deliver(Waiter)
        /// The buffer passed the limit: suspend the task.
        case suspendTask
        /// Write the bytes to the spill file at `offset`, then report ``spillWritten(_:to:)``.
        case writeSpill(Spill, offset: Int64)
        /// The spill file could not be made: cancel the task and fail the consumer (see ``failBody()``).
        case fail(any Error)
    }

    /// Body bytes arrived; `makeSpill` makes the spill file the first time one is needed.
    mutating func receivedData(_ data: Data, makeSpill: () throws -> Spill) -> DataAction {
        guard !isCancelled, outcome == nil else { return .none }
        if let waiting = waiter {
            waiter = nil
            return .deliver(waiting)
        }
        switch backpressure {
        case .suspendTask:
            append(data)
            if bufferedBytes > maximumBufferedBytes && !isSuspended {
                isSuspended = true
                return .suspendTask
            }
            return .none
        case .spillToFile:
            if spill == nil && bufferedBytes + data.count <= maximumBufferedBytes {
                append(data)
                return .none
            }
            if spill == nil {
                do {
                    spill = (try makeSpill(), 0, 0)
                } catch {
                    isCancelled = true
                    return .fail(error)
                }
            }
            guard let (file, written, _) = spill else { return .none }
            return .writeSpill(file, offset: written)
        }
    }

    private mutating func append(_ data: Data) {
        chunks.append(data)
        bufferedBytes += data.count
    }

    /// `count` bytes were written to `file`: only now may the consumer read them. Returns the consumer to hand the
    /// bytes to directly when it is waiting (it has read everything before them).
    mutating func spillWritten(_ count: Int, to file: Spill) -> Waiter? {
        guard let current = spill, current.file === file else { return nil }
        spill?.written += Int64(count)
        guard let waiter else { return nil }
        self.waiter = nil
        spill?.read = current.written + Int64(count)
        return waiter
    }

    /// Buffering the body failed: nothing more is delivered. Returns the consumer to fail; the caller cancels the
    /// task.
    mutating func failBody() -> Waiter? {
        isCancelled = true
        defer { waiter = nil }
        return waiter
    }

    /// An authentication challenge is about to cancel the task; the head delivered so far is the whole response.
    mutating func challengeEndsTask() {
        endedByChallenge = true
    }

    /// The server failed the security policy; the task's error will be `error`.
    mutating func trustFailed(_ error: CourierError) {
        trustFailure = error
    }

    /// URLSession is sending the request again on a new connection, and cannot send its body again (see
    /// ``URLSessionTransportDelegate``): the task is to be cancelled, and ends with
    /// ``CourierError/connectionLost(underlyingError:context:)`` for an ``URLSessionBodyNotResentError`` instead of
    /// the cancellation. Returns whether the caller is to cancel the task: not when a head was already delivered (no
    /// second attempt can follow one), the task was cancelled or it is over.
    mutating func bodyNotResent() -> Bool {
        guard !headDelivered, !isCancelled, outcome == nil, !lostBody else { return false }
        lostBody = true
        return true
    }

    struct CompletionAction {
        var outcome: Result<Void, CourierError>
        /// Fail this (with the error, or "no response" on success).
        var head: Head?
        /// Answer this: the end of the body (`nil`), or the error.
        var waiter: Waiter?
        /// Nothing is left for a consumer to read: forget the task.
        var forget: Bool
        /// The request is to be sent again by the transport, which takes over the request body's temporary file: do
        /// not delete it.
        var keepsUploadFile = false
    }

    /// The task completed, with URLSession's error mapped to a ``CourierError`` when it failed.
    mutating func complete(error: CourierError?) -> CompletionAction {
        let outcome: Result<Void, CourierError>
        if let trustFailure {
            outcome = .failure(trustFailure)
        } else if lostBody {
            outcome = .failure(
                .connectionLost(underlyingError: URLSessionBodyNotResentError(), context: CourierError.Context()))
        } else if endedByChallenge && headDelivered {
            outcome = .success(())
        } else {
            outcome = error.map { .failure($0) } ?? .success(())
        }
        self.outcome = outcome
        defer {
            head = nil
            waiter = nil
        }
        // Kept only while a consumer still has buffered bytes to read; a waiting consumer has read them all.
        let forget = isCancelled || !headDelivered || waiter != nil
        return CompletionAction(
            outcome: outcome, head: head, waiter: waiter, forget: forget, keepsUploadFile: lostBody && head != nil)
    }
}
