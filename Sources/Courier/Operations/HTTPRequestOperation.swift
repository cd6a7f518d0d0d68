import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// A ``URLConnectionOperation`` for HTTP (AFNetworking 2's `AFHTTPRequestOperation`): its body is serialized by a
/// ``ResponseSerializer``, it calls a success or a failure block, and a paused download resumes where it stopped.
///
/// Pausing asks the server, when the operation resumes, for the rest of the body only: `Range: bytes=<offset>-`
/// (the bytes already written to the output stream or kept in memory) and `If-Range` with the response's `ETag` (or
/// its `Last-Modified`). A `206` continues the body; a `200` (the resource changed, or the server ignores ranges)
/// starts it again from zero.
open class HTTPRequestOperation: URLConnectionOperation, @unchecked Sendable {
    private struct Serialization {
        var serializer: any ResponseSerializer = HTTPResponseSerializer()
        var done = false
        var object: (any Sendable)?
        var error: (any Error)?
    }

    private let serialization = Locked(Serialization())

    /// Serializes the body once the operation has finished; default ``HTTPResponseSerializer`` (the raw data, for
    /// statuses 200–299).
    public var responseSerializer: any ResponseSerializer {
        get { serialization.withLock { $0.serializer } }
        set { serialization.withLock { $0.serializer = newValue } }
    }

    /// The body as ``responseSerializer`` makes it: serialized once, on first use after the operation has
    /// finished; `nil` before then, or when the operation or the serialization failed (see ``error``).
    public var responseObject: (any Sendable)? {
        guard isFinished else { return nil }
        let failed = super.error != nil
        let (response, data) = (self.response, responseData)
        return serialization.withLock { serialization in
            if !serialization.done, !failed {
                serialization.done = true
                do {
                    serialization.object = try serialization.serializer.serialize(response: response, data: data)
                } catch {
                    serialization.error = error
                }
            }
            return serialization.object
        }
    }

    /// The serialization's error when it failed, else the request's. Once the operation has finished, reading it
    /// serializes the response first (``responseObject``), so a failed validation is never missed.
    open override var error: (any Error)? {
        if isFinished { _ = responseObject }
        return serialization.withLock { $0.error } ?? super.error
    }

    /// Pauses as ``URLConnectionOperation/pause()`` does, and prepares the request that resumes the download.
    open override func pause() {
        super.pause()
        guard isPaused else { return }
        store.withLock { store in
            guard store.received > 0 else { return }
            if let validator = store.response.flatMap({
                $0.value(forHTTPHeaderField: "ETag") ?? $0.value(forHTTPHeaderField: "Last-Modified")
            }) {
                store.request.setValue(validator, forHTTPHeaderField: "If-Range")
            }
            store.request.setValue("bytes=\(store.received)-", forHTTPHeaderField: "Range")
        }
    }

    /// Serializes the response before the completion block is queued, so it does not run on the completion queue.
    override func prepareForCompletion() {
        _ = responseObject
    }

    /// Sets `completionBlock` to call `success` with the ``responseObject`` or `failure` with the ``error``, on
    /// ``URLConnectionOperation/completionQueue`` inside ``URLConnectionOperation/completionGroup``; the response is serialized before, off the calling thread and
    /// off the completion queue.
    public func setCompletionBlock(
        success: (@Sendable (HTTPRequestOperation, (any Sendable)?) -> Void)?,
        failure: (@Sendable (HTTPRequestOperation, any Error) -> Void)?
    ) {
        completionBlock = { [weak self] in
            guard let self else { return }
            let object = self.responseObject
            if let error = self.error {
                failure?(self, error)
            } else {
                success?(self, object)
            }
        }
    }
}
