//! Direct calls: the streaming calls that carry a cluster's steady traffic (a partition's
//! replication to a follower, the commands one broker's gateway forwards to another, the job
//! streams a gateway registers) each on a substream of the session of their own, carrying
//! protobuf messages without HTTP/2 between them and the session.
//!
//! Under HTTP/2 a message crossed two tasks on each side beside the session's (the caller's,
//! the HTTP/2 connection's; the connection's and the call's handler on the server) and paid
//! HTTP/2's framing, flow control and window updates on top of the session's own (yamux
//! already multiplexes and flow-controls every substream). A direct call's messages go from
//! the task that makes them to the session, and from the session to the task that reads
//! them.
//!
//! The wire: a call's substream starts with [`CALL`] and the [`Method`]'s byte; then each side
//! sends frames, each a length (`u32`, big-endian, of what follows), a kind byte and the
//! body. A message frame's body is one protobuf message of the method's type for that side.
//! The caller ends its side by closing its half of the substream; the answering side ends its
//! answer with an end frame (the status code as a `u32`, then its message in UTF-8; code 0
//! for an answer given in full) and closes its half. An answer that ends without an end frame
//! (the other broker went away) fails as unavailable. HTTP/2's client preface starts with
//! `P`: the server tells a direct call from a tonic connection by the substream's first
//! byte ([`super::serve`]).
//!
//! Each side of a call reads and gathers its frames in a buffer of 8 KiB (tokio-util's
//! default), grown only while a larger message passes; what the peer sent and nobody read yet
//! is yamux's, within the session's receive window.

use std::io;
use std::marker::PhantomData;
use std::pin::Pin;
use std::task::{Context, Poll, ready};

use futures_util::{SinkExt as _, Stream, StreamExt as _};
use prost::bytes::{Buf as _, BufMut as _, BytesMut};
use tokio::io::{AsyncReadExt as _, ReadHalf, WriteHalf};
use tokio_util::codec::{Decoder, Encoder, FramedRead, FramedWrite, LengthDelimitedCodec};
use tokio_util::sync::{CancellationToken, DropGuard};
use tonic::{Code, Status};

use super::session::Substream;

/// A direct call's first byte (HTTP/2's client preface starts with `P`).
pub const CALL: u8 = 0xB1;

/// The largest message either side takes, as the tonic services take.
const MAX_MESSAGE: usize = 64 * 1024 * 1024;

const MESSAGE: u8 = 0;
const END: u8 = 1;

/// The calls made directly; the byte after [`CALL`]. What each carries is said in
/// `proto/internal.proto`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Method {
    /// `AppendEntriesRequest`s, answered by `StreamAppendResponse`s.
    StreamAppend = 1,
    /// `ExecuteCall`s, answered by `ExecuteAnswer`s.
    Execute = 2,
    /// `JobStreamControl`s, answered by `PushedJob`s.
    OpenJobStream = 3,
}

impl Method {
    fn of(byte: u8) -> Option<Self> {
        [Self::StreamAppend, Self::Execute, Self::OpenJobStream]
            .into_iter()
            .find(|method| *method as u8 == byte)
    }
}

/// One frame of a call.
#[derive(Debug)]
enum Frame<M> {
    Message(M),
    /// The answer's end, with its status (`Code::Ok`: answered in full).
    End(Status),
}

fn invalid(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

/// Reads the frames of messages `M`.
struct Decode<M> {
    lengths: LengthDelimitedCodec,
    message: PhantomData<fn() -> M>,
}

impl<M> Decode<M> {
    fn new() -> Self {
        Self {
            lengths: LengthDelimitedCodec::builder()
                .max_frame_length(MAX_MESSAGE + 1)
                .new_codec(),
            message: PhantomData,
        }
    }
}

impl<M: prost::Message + Default> Decoder for Decode<M> {
    type Item = Frame<M>;
    type Error = io::Error;

    fn decode(&mut self, src: &mut BytesMut) -> io::Result<Option<Frame<M>>> {
        let Some(mut frame) = self.lengths.decode(src)? else {
            return Ok(None);
        };
        if frame.is_empty() {
            return Err(invalid("a direct call's frame without its kind".into()));
        }
        match frame.get_u8() {
            MESSAGE => M::decode(frame.freeze())
                .map(|message| Some(Frame::Message(message)))
                .map_err(|e| invalid(format!("a direct call's message does not decode: {e}"))),
            END if frame.len() >= 4 => {
                let code = Code::from_i32(frame.get_u32() as i32);
                let message = String::from_utf8_lossy(&frame).into_owned();
                Ok(Some(Frame::End(Status::new(code, message))))
            }
            END => Err(invalid("a direct call's end frame without its code".into())),
            kind => Err(invalid(format!(
                "a direct call's frame of unknown kind {kind}"
            ))),
        }
    }
}

/// Writes the frames of messages `M`.
struct Encode<M>(PhantomData<fn(M)>);

impl<M: prost::Message> Encoder<Frame<M>> for Encode<M> {
    type Error = io::Error;

    fn encode(&mut self, frame: Frame<M>, dst: &mut BytesMut) -> io::Result<()> {
        match frame {
            Frame::Message(message) => {
                let length = message.encoded_len();
                if length > MAX_MESSAGE {
                    return Err(invalid(format!(
                        "a message of {length} bytes, above the largest a direct call takes \
                         ({MAX_MESSAGE})"
                    )));
                }
                dst.reserve(5 + length);
                dst.put_u32(length as u32 + 1);
                dst.put_u8(MESSAGE);
                message
                    .encode(dst)
                    .map_err(|e| invalid(format!("a message does not encode: {e}")))
            }
            Frame::End(status) => {
                let text = status.message().as_bytes();
                let text = &text[..text.len().min(MAX_MESSAGE - 4)];
                dst.reserve(9 + text.len());
                dst.put_u32(5 + text.len() as u32);
                dst.put_u8(END);
                dst.put_u32(status.code() as i32 as u32);
                dst.put_slice(text);
                Ok(())
            }
        }
    }
}

/// Sends `frames` as they come, flushing whenever none is ready, then closes this side.
async fn send<M: prost::Message>(
    mut sink: FramedWrite<WriteHalf<Substream>, Encode<M>>,
    frames: impl Stream<Item = Frame<M>>,
) -> io::Result<()> {
    let mut frames = std::pin::pin!(frames.map(Ok::<_, io::Error>));
    sink.send_all(&mut frames).await?;
    sink.close().await
}

/// A direct call's answers, as the caller reads them: each message, then the end (`None`
/// when answered in full, else the error the other side ended with, or unavailable when the
/// call broke). Dropped, the call ends: its requests are no longer sent.
pub struct Answers<M> {
    frames: FramedRead<ReadHalf<Substream>, Decode<M>>,
    over: bool,
    _sending: DropGuard,
}

impl<M: prost::Message + Default> Answers<M> {
    /// The next answer, as `tonic::Streaming::message` gives it.
    pub async fn message(&mut self) -> Result<Option<M>, Status> {
        next_message(self).await
    }
}

impl<M: prost::Message + Default> Stream for Answers<M> {
    type Item = Result<M, Status>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.over {
            return Poll::Ready(None);
        }
        let frame = ready!(self.frames.poll_next_unpin(cx));
        let answer = match frame {
            Some(Ok(Frame::Message(message))) => return Poll::Ready(Some(Ok(message))),
            Some(Ok(Frame::End(status))) if status.code() == Code::Ok => None,
            Some(Ok(Frame::End(status))) => Some(Err(status)),
            Some(Err(error)) => Some(Err(Status::unavailable(format!(
                "the call to the other broker broke: {error}"
            )))),
            None => Some(Err(Status::unavailable(
                "the other broker closed the call without answering it in full",
            ))),
        };
        self.over = true;
        Poll::Ready(answer)
    }
}

/// Makes a `method` call on `substream` (just opened): sends `requests` on a task of its own
/// as they come, and closes the caller's side after the last.
pub(super) fn call<Req, Resp>(
    substream: Substream,
    method: Method,
    requests: impl Stream<Item = Req> + Send + 'static,
) -> Answers<Resp>
where
    Req: prost::Message + 'static,
    Resp: prost::Message + Default,
{
    let (read, write) = tokio::io::split(substream);
    let mut sink = FramedWrite::new(write, Encode(PhantomData));
    sink.write_buffer_mut().put_slice(&[CALL, method as u8]);
    let stop = CancellationToken::new();
    let stopped = stop.clone();
    tokio::spawn(async move {
        tokio::select! {
            sent = send(sink, requests.map(Frame::Message)) => {
                if let Err(error) = sent {
                    tracing::debug!(?method, %error, "a direct call's requests stopped");
                }
            }
            () = stopped.cancelled() => {}
        }
    });
    Answers {
        frames: FramedRead::new(read, Decode::new()),
        over: false,
        _sending: stop.drop_guard(),
    }
}

/// A direct call's requests, as its handler reads them: each message, then the end (`None`
/// when the caller closed its side, an error when the call broke).
pub type Requests<M> = Pin<Box<dyn Stream<Item = Result<M, Status>> + Send>>;

/// A handler's answers to a direct call: each message, and at most one error, which ends it.
pub type Answering<M> = Pin<Box<dyn Stream<Item = Result<M, Status>> + Send>>;

/// What answers each method: [`super::InternalServer`] implements it.
pub(super) trait Handler: Send + Sync + 'static {
    fn stream_append(
        &self,
        requests: Requests<super::proto::AppendEntriesRequest>,
    ) -> Answering<super::proto::StreamAppendResponse>;
    fn execute(
        &self,
        calls: Requests<super::proto::ExecuteCall>,
    ) -> Answering<super::proto::ExecuteAnswer>;
    fn open_job_stream(
        &self,
        controls: Requests<super::proto::JobStreamControl>,
    ) -> Answering<super::proto::PushedJob>;
}

/// Answers the direct call a peer opened `substream` with (its first byte is [`CALL`]).
pub(super) async fn answer(handler: &impl Handler, mut substream: Substream) {
    let header = async {
        let call = substream.read_u8().await?;
        let method = substream.read_u8().await?;
        io::Result::Ok((call, method))
    };
    let method = match header.await {
        Ok((CALL, method)) => method,
        Ok(_) | Err(_) => return,
    };
    let (read, write) = tokio::io::split(substream);
    let sent = match Method::of(method) {
        Some(Method::StreamAppend) => respond(write, handler.stream_append(requests(read))).await,
        Some(Method::Execute) => respond(write, handler.execute(requests(read))).await,
        Some(Method::OpenJobStream) => {
            respond(write, handler.open_job_stream(requests(read))).await
        }
        None => {
            let status = Status::unimplemented(format!("no direct call has method {method}"));
            let refused = futures_util::stream::once(async { Err(status) });
            respond::<super::proto::Empty>(write, Box::pin(refused)).await
        }
    };
    if let Err(error) = sent {
        tracing::debug!(method, %error, "a direct call's answers stopped");
    }
}

fn requests<M: prost::Message + Default + Send + 'static>(
    read: ReadHalf<Substream>,
) -> Requests<M> {
    let frames = FramedRead::new(read, Decode::<M>::new());
    Box::pin(frames.map(|frame| match frame {
        Ok(Frame::Message(message)) => Ok(message),
        Ok(Frame::End(_)) => Err(Status::invalid_argument(
            "a caller ends its side of a direct call by closing it, not with an end frame",
        )),
        Err(error) => Err(Status::cancelled(format!(
            "the caller's side of the call broke: {error}"
        ))),
    }))
}

/// Sends `answers`, then the end: the first error's status, or `Ok` after the last answer.
async fn respond<M: prost::Message>(
    write: WriteHalf<Substream>,
    answers: Answering<M>,
) -> io::Result<()> {
    let sink = FramedWrite::new(write, Encode(PhantomData));
    let frames = answers
        .map(|answer| match answer {
            Ok(message) => Frame::Message(message),
            Err(status) => Frame::End(status),
        })
        .chain(futures_util::stream::once(async {
            Frame::End(Status::ok(""))
        }))
        .scan(false, |over, frame| {
            let next = (!*over).then(|| {
                *over = matches!(frame, Frame::End(_));
                frame
            });
            async move { next }
        });
    send(sink, frames).await
}

/// The next message of `requests`, as `tonic::Streaming::message` gives it.
pub async fn next_message<M, S>(requests: &mut S) -> Result<Option<M>, Status>
where
    S: Stream<Item = Result<M, Status>> + Unpin,
{
    requests.next().await.transpose()
}

#[cfg(test)]
mod tests {
    use std::marker::PhantomData;

    use prost::bytes::{BufMut as _, BytesMut};
    use tokio_util::codec::{Decoder as _, Encoder as _};
    use tonic::{Code, Status};

    use super::{Decode, Encode, Frame, MAX_MESSAGE};
    use crate::transport::proto;

    fn call(id: u64) -> proto::ExecuteCall {
        proto::ExecuteCall {
            id,
            request: Some(proto::ExecuteRequest {
                partition_id: 2,
                command: vec![7; 300],
                timeout_ms: 10_000,
            }),
        }
    }

    #[test]
    fn messages_and_the_end_arrive_as_sent_whatever_pieces_the_bytes_come_in() {
        let mut encode = Encode::<proto::ExecuteCall>(PhantomData);
        let mut wire = BytesMut::new();
        for id in 1..=3 {
            encode.encode(Frame::Message(call(id)), &mut wire).unwrap();
        }
        let status = Status::failed_precondition("not this broker");
        encode.encode(Frame::End(status), &mut wire).unwrap();
        // The bytes arrive seven at a time: nothing decodes before its frame is whole.
        let mut decode = Decode::<proto::ExecuteCall>::new();
        let mut arrived = BytesMut::new();
        let mut frames = Vec::new();
        for piece in wire.chunks(7) {
            arrived.put_slice(piece);
            while let Some(frame) = decode.decode(&mut arrived).unwrap() {
                frames.push(frame);
            }
        }
        assert!(arrived.is_empty());
        assert_eq!(frames.len(), 4);
        for (id, frame) in (1..=3).zip(&frames) {
            match frame {
                Frame::Message(message) => assert_eq!(*message, call(id)),
                other => panic!("a message expected, got {other:?}"),
            }
        }
        match &frames[3] {
            Frame::End(status) => {
                assert_eq!(status.code(), Code::FailedPrecondition);
                assert_eq!(status.message(), "not this broker");
            }
            other => panic!("the end expected, got {other:?}"),
        }
    }

    #[test]
    fn malformed_frames_are_errors_not_panics() {
        let frames: [&[u8]; 4] = [
            // A frame without its kind.
            &[0, 0, 0, 0],
            // A kind no side sends.
            &[0, 0, 0, 1, 9],
            // An end without its code.
            &[0, 0, 0, 3, 1, 0, 0],
            // A message whose bytes are not the method's message.
            &[0, 0, 0, 3, 0, 0xff, 0xff],
        ];
        for bytes in frames {
            let error = Decode::<proto::ExecuteCall>::new()
                .decode(&mut BytesMut::from(bytes))
                .expect_err("malformed");
            assert_eq!(error.kind(), std::io::ErrorKind::InvalidData, "{bytes:?}");
        }
        // A length above the largest message is refused before anything is buffered.
        let mut too_long = BytesMut::new();
        too_long.put_u32(MAX_MESSAGE as u32 + 2);
        assert!(
            Decode::<proto::ExecuteCall>::new()
                .decode(&mut too_long)
                .is_err()
        );
    }

    #[test]
    fn a_message_above_the_largest_is_not_sent() {
        let huge = proto::PushedJob {
            key: 1,
            job: vec![0; MAX_MESSAGE],
        };
        let mut wire = BytesMut::new();
        let error = Encode::<proto::PushedJob>(PhantomData)
            .encode(Frame::Message(huge), &mut wire)
            .expect_err("too large");
        assert!(error.to_string().contains("above the largest"), "{error}");
        assert!(wire.is_empty());
    }
}
