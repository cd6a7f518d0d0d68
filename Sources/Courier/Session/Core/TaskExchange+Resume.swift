import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The resume step of a download continued from resume data: ``ResumeDecision`` says whether the response continues
/// the partial file.
extension TaskExchange {
    /// Starts the file over when the response is the whole resource; asks once more for all of it, returning `true`,
    /// when the server answered the range with `416`.
    @inline(never)
    func retryIfResumeFails(_ response: TransportResponse, head: ResponseHead) async throws -> Bool {
        let resumeOffset = delegate.downloadFile?.resumeOffset ?? 0
        guard resumeOffset > 0 else { return false }
        switch ResumeDecision(response: try Self.http(head), offset: resumeOffset) {
        case .append:
            if let hook = hooks.downloadTaskDidResume, let download = task as? DownloadTask {
                let length = head.contentLength
                hook(download, resumeOffset, length >= 0 ? CheckedConversion.sum(resumeOffset, length) ?? -1 : -1)
            }
            return false
        case .restart:
            try await delegate.downloadFile?.restart()
            return false
        case .retryWholeResource:
            // The partial file does not fit the resource any more.
            try await delegate.downloadFile?.restart()
            request.setValue(nil, forHTTPHeaderField: "Range")
            request.setValue(nil, forHTTPHeaderField: "If-Range")
            await discard(response.body)
            return true
        }
    }
}
