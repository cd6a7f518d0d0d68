import Courier
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends a body that is not in `httpBody` (a multipart body streamed from files), drawing its progress, and returns
/// as soon as the response head has arrived, with the response body to be read as it arrives.
///
/// The response is streamed like any other: never spooled to a file or collected in memory, so a server answering
/// an upload with an endless body costs no disk, and the reader going away (`| head`) ends the transfer.
enum Upload {
    /// The response head, the task whose ``DataStreamTask/chunks`` carry the body, and the HTTP version.
    ///
    /// - Throws: the task's error when it fails before the head arrives; cancelling the calling task cancels it.
    static func send(_ request: URLRequest, body: HTTPRequestBody, manager: SessionManager, bar: ProgressBar)
        async throws -> (HTTPURLResponse, DataStreamTask, String?)
    {
        let task = manager.dataStreamTask(with: request, body: body)
        let updates = manager.uploadProgressUpdates(for: task)
        let drawing = Task { for await progress in updates { bar.update(progress) } }
        let response: HTTPURLResponse
        do {
            response = try await withTaskCancellationHandler {
                task.resume()
                return try await task.response()
            } onCancel: {
                task.cancel()
            }
        } catch {
            drawing.cancel()
            bar.abandon()
            throw error
        }
        drawing.cancel()
        // The bar ends where the upload stands when the answer arrives (a server may answer before reading it all).
        if let sent = manager.uploadProgress(for: task) { bar.update(sent) }
        bar.finish()
        return (response, task, task.httpVersion)
    }
}
