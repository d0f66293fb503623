package needle.bench;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexReader;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.index.Term;
import org.apache.lucene.queryparser.classic.MultiFieldQueryParser;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ReferenceManager;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.SearcherFactory;
import org.apache.lucene.search.SearcherManager;
import org.apache.lucene.search.Sort;
import org.apache.lucene.search.SortField;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.search.TermQuery;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.MMapDirectory;
import org.apache.lucene.util.Version;

/**
 * Serves a {@link BenchIndex} index over the WSBench line protocol (bench/PROTOCOL.md).
 *
 * <pre>
 * Serve --index DIR --threads T [--query-cache] [--live --reopen-ms MS --ingest-threads N]
 * </pre>
 *
 * <p>One {@link MMapDirectory} (so {@code -Dorg.apache.lucene.store.defaultReadAdvice=RANDOM}
 * applies), one {@link DirectoryReader} and {@link IndexSearcher} (BM25 defaults, no intra-query
 * executor), a fixed pool of T worker threads; each worker has its own {@link
 * MultiFieldQueryParser} over {@code title} and {@code body} (default operator OR, {@link
 * StandardAnalyzer}). The index is not warmed. The query cache is off unless {@code --query-cache}
 * is given (tantivy has none, and the benchmark repeats queries: {@code searcher.count} would be
 * answered from Lucene's default {@code LRUQueryCache} after a few repetitions).
 *
 * <p>{@code top}: {@code searcher.search(query, k)}, Lucene's default hit counting (exact up to
 * 1000 hits, then a lower bound). {@code count}: {@code searcher.count(query)} (exact) plus {@code
 * searcher.search(query, k)}. {@code K = 0} answers the exact count with no hits in either mode.
 *
 * <p>Responses are written by the workers through one synchronized writer, flushed per line. {@code
 * STATS} waits for every earlier request and answers {@code
 * {"heap_used":...,"heap_committed":...,"rss_kb":...,"hwm_kb":...}}. Malformed requests answer
 * {@code ID\tERROR\tmessage} ({@code -1} when the ID is unreadable). End of input: the pool drains,
 * the process exits 0.
 *
 * <p>{@code --live}: near-real-time search as Lucene offers it. An {@link IndexWriter} (Lucene's
 * default merge policy and concurrent merge scheduler) appends to the index, a {@link
 * SearcherManager} over it is refreshed every {@code --reopen-ms} milliseconds by its own thread,
 * and each search acquires the latest searcher. {@code ID\tadd\t0\tJSON} is applied with {@code
 * updateDocument} (replace by {@code id}) on one of {@code --ingest-threads} threads and answered
 * {@code ID\t1\tDOCID} when it returns; {@code ID\tid\t0\tDOCID} is answered by the input
 * thread ({@code ID\tN\t}: how many documents with that id the current searcher sees), so a
 * visibility probe never waits behind a search. End of input rolls the writer back.
 *
 * <p>The update benchmark's requests (seed 002), live only, on the ingest threads: {@code
 * ID\tnumeric\t0\tDOCID\tVALUE} ({@code updateNumericDocValue} of {@code last_modified}) and
 * {@code ID\tbinary\t0\tDOCID\tBASE64} ({@code updateBinaryDocValue} of {@code title_dv}),
 * answered {@code ID\t1\tDOCID}; {@code ID\tsorted\tK\tQUERY}: the top K by {@code
 * last_modified} descending. {@code STATS} adds the time spent in update calls and in reopens.
 *
 * <p>{@code ID\tvalues\tK\tBODY}: a search body in Elasticsearch's DSL over the field values
 * ({@link Values}).
 */
public final class Serve {
  private static final String USAGE =
      "usage: Serve --index DIR [--threads T] [--query-cache] [--live [--reopen-ms MS]"
          + " [--ingest-threads N]]";
  private static final Set<String> ID_ONLY = Set.of(BenchIndex.ID);

  private final ReferenceManager<IndexSearcher> searchers;
  private final IndexWriter writer;
  private final ThreadLocal<QueryParser> parsers;
  private final Writer out;
  private final Object pendingLock = new Object();
  private int pending;
  private static final Timed UPDATES = new Timed();
  private static final Timed REOPENS = new Timed();
  private static final Sort BY_LAST_MODIFIED =
      new Sort(new SortField(BenchIndex.LAST_MODIFIED, SortField.Type.LONG, true));

  private Serve(ReferenceManager<IndexSearcher> searchers, IndexWriter writer, Writer out) {
    this.searchers = searchers;
    this.writer = writer;
    this.out = out;
    StandardAnalyzer analyzer = new StandardAnalyzer();
    this.parsers =
        ThreadLocal.withInitial(() -> new MultiFieldQueryParser(BenchIndex.TEXT_FIELDS, analyzer));
  }

  public static void main(String[] args) throws Exception {
    Path indexDir = null;
    int threads = 1;
    boolean queryCache = false;
    boolean live = false;
    int reopenMs = 1000;
    int ingestThreads = 1;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--query-cache")) {
        queryCache = true;
        continue;
      }
      if (args[i].equals("--live")) {
        live = true;
        continue;
      }
      String value = i + 1 < args.length ? args[i + 1] : null;
      if (value == null) {
        usage(args[i] + " needs a value");
      }
      switch (args[i]) {
        case "--index" -> indexDir = Path.of(value);
        case "--threads" -> {
          try {
            threads = Integer.parseInt(value);
          } catch (NumberFormatException e) {
            threads = 0;
          }
          if (threads < 1) {
            usage("--threads: not a positive integer: " + value);
          }
        }
        case "--reopen-ms" -> reopenMs = positive(args[i], value);
        case "--ingest-threads" -> ingestThreads = positive(args[i], value);
        default -> usage("unknown argument " + args[i]);
      }
      i++;
    }
    if (indexDir == null) {
      usage("--index is required");
    }

    Writer out =
        new BufferedWriter(new OutputStreamWriter(System.out, StandardCharsets.UTF_8), 1 << 16);
    ExecutorService pool = Executors.newFixedThreadPool(threads);
    ExecutorService ingest = live ? Executors.newFixedThreadPool(ingestThreads) : null;
    boolean cache = queryCache;
    SearcherFactory factory =
        new SearcherFactory() {
          @Override
          public IndexSearcher newSearcher(IndexReader reader, IndexReader previous) {
            IndexSearcher searcher = new IndexSearcher(reader);
            if (!cache) {
              // tantivy has no query cache; repeated counts would hit Lucene's LRUQueryCache.
              searcher.setQueryCache(null);
            }
            return searcher;
          }
        };
    try (MMapDirectory dir = new MMapDirectory(indexDir);
        IndexWriter writer = live ? new IndexWriter(dir, liveConfig()) : null;
        ReferenceManager<IndexSearcher> searchers =
            live
                ? new SearcherManager(writer, factory)
                : new SearcherManager(DirectoryReader.open(dir), factory)) {
      Serve serve = new Serve(searchers, writer, out);
      if (live) {
        startReopening(searchers, reopenMs);
      }
      IndexSearcher first = searchers.acquire();
      int docs = first.getIndexReader().numDocs();
      searchers.release(first);
      serve.write(
          "READY\t{\"engine\":\"lucene\",\"version\":\""
              + Version.LATEST
              + "\",\"docs\":"
              + docs
              + "}");
      BufferedReader in =
          new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8), 1 << 16);
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isBlank()) {
          continue;
        }
        if (line.strip().equals("STATS")) {
          serve.awaitIdle();
          serve.write("STATS\t" + stats());
          continue;
        }
        String request = line;
        String mode = modeOf(request);
        if (live && mode.equals("id")) {
          serve.write(serve.probe(request));
          continue;
        }
        serve.begin();
        (live && WRITES.contains(mode) ? ingest : pool)
            .execute(
            () -> {
              try {
                serve.write(serve.answer(request));
              } finally {
                serve.end();
              }
            });
      }
      pool.shutdown();
      pool.awaitTermination(Long.MAX_VALUE, TimeUnit.DAYS);
      if (live) {
        ingest.shutdown();
        ingest.awaitTermination(Long.MAX_VALUE, TimeUnit.DAYS);
        writer.rollback();
      }
    }
    out.flush();
    System.exit(0);
  }

  /** Answers one request line with the latest searcher; never throws. */
  private String answer(String line) {
    String[] parts = line.split("\t", 4);
    String id = parts[0].strip();
    IndexSearcher searcher = null;
    try {
      if (parts.length < 4) {
        throw new IllegalArgumentException("expected ID\\tMODE\\tK\\tQUERY");
      }
      if (!isId(id)) {
        throw new IllegalArgumentException("bad request id \"" + id + "\"");
      }
      if (WRITES.contains(parts[1]) && writer != null) {
        long[] started = Timed.now();
        String docId = write(parts[1], parts[3]);
        UPDATES.add(started);
        return id + "\t1\t" + docId;
      }
      if (parts[1].equals("values")) {
        searcher = searchers.acquire();
        return Values.answer(searcher, id, parts[3]);
      }
      boolean sorted = parts[1].equals("sorted");
      boolean count =
          switch (parts[1]) {
            case "top", "sorted" -> false;
            case "count" -> true;
            default -> throw new IllegalArgumentException("unknown mode \"" + parts[1] + "\"");
          };
      searcher = searchers.acquire();
      long requested;
      try {
        requested = Long.parseLong(parts[2].strip());
      } catch (NumberFormatException e) {
        requested = -1;
      }
      if (requested < 0) {
        throw new IllegalArgumentException("bad K \"" + parts[2] + "\"");
      }
      // IndexSearcher caps k at maxDoc anyway; tantivy's peer does the same.
      int k = (int) Math.min(requested, Math.max(1, searcher.getIndexReader().maxDoc()));
      Query query = parsers.get().parse(parts[3]);
      StringBuilder sb = new StringBuilder(32 + 24 * k).append(id).append('\t');
      if (k == 0) {
        return sb.append(searcher.count(query)).append('\t').toString();
      }
      long total = count ? searcher.count(query) : -1;
      TopDocs top = sorted ? searcher.search(query, k, BY_LAST_MODIFIED) : searcher.search(query, k);
      sb.append(count ? total : top.totalHits.value()).append('\t');
      StoredFields stored = searcher.storedFields();
      ScoreDoc[] hits = top.scoreDocs;
      for (int i = 0; i < hits.length; i++) {
        if (i > 0) {
          sb.append(',');
        }
        String docId = stored.document(hits[i].doc, ID_ONLY).get(BenchIndex.ID);
        sb.append(docId == null ? "" : docId);
      }
      return sb.toString();
    } catch (Throwable t) {
      return error(id, t);
    } finally {
      if (searcher != null) {
        release(searcher);
      }
    }
  }

  /** {@code ID\tid\t0\tDOCID}: how many documents with that id the latest searcher sees. */
  private String probe(String line) {
    String[] parts = line.split("\t", 4);
    String id = parts[0].strip();
    try {
      if (parts.length < 4 || !isId(id)) {
        throw new IllegalArgumentException("expected ID\\tid\\t0\\tDOCID");
      }
      IndexSearcher searcher = searchers.acquire();
      try {
        return id + "\t" + searcher.count(new TermQuery(new Term(BenchIndex.ID, parts[3]))) + "\t";
      } finally {
        release(searcher);
      }
    } catch (Throwable t) {
      return error(id, t);
    }
  }

  private static final Set<String> WRITES = Set.of("add", "numeric", "binary");

  /** One write: a document added (or replaced), or a doc value updated; returns the doc's id. */
  private String write(String mode, String rest) throws IOException {
    if (mode.equals("add")) {
      return add(rest);
    }
    String[] idValue = rest.split("\t", 2);
    if (idValue.length < 2) {
      throw new IllegalArgumentException("expected DOCID\\tVALUE");
    }
    Term term = new Term(BenchIndex.ID, idValue[0]);
    if (mode.equals("numeric")) {
      writer.updateNumericDocValue(term, BenchIndex.LAST_MODIFIED, Long.parseLong(idValue[1]));
    } else {
      byte[] bytes = java.util.Base64.getDecoder().decode(idValue[1]);
      writer.updateBinaryDocValue(term, BenchIndex.TITLE_DV, new BytesRef(bytes));
    }
    return idValue[0];
  }

  /** Adds (or replaces, by id) one corpus document; returns its id. */
  private String add(String json) throws IOException {
    Map<String, Object> fields = Json.parseObject(json);
    if (!(fields.get(BenchIndex.ID) instanceof String docId)) {
      throw new IllegalArgumentException("document without a string \"id\"");
    }
    writer.updateDocument(new Term(BenchIndex.ID, docId), BenchIndex.toDocument(fields, 0));
    return docId;
  }

  private void release(IndexSearcher searcher) {
    try {
      searchers.release(searcher);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  private static String error(String id, Throwable t) {
    String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
    if (!(t instanceof IllegalArgumentException)) {
      message = t.getClass().getSimpleName() + ": " + message;
    }
    return (isId(id) ? id : "-1") + "\tERROR\t" + message.replaceAll("[\t\r\n]+", " ");
  }

  private static String modeOf(String line) {
    String[] parts = line.split("\t", 3);
    return parts.length > 1 ? parts[1] : "";
  }

  /** Lucene's defaults (tiered merges, concurrent merge scheduler), the benchmark's analysis. */
  private static IndexWriterConfig liveConfig() {
    IndexWriterConfig config = new IndexWriterConfig(new StandardAnalyzer());
    config.setOpenMode(IndexWriterConfig.OpenMode.APPEND);
    config.setSimilarity(new BM25Similarity());
    return config;
  }

  /** Refreshes the searcher every {@code ms} milliseconds, as an NRT application does. */
  private static void startReopening(ReferenceManager<IndexSearcher> searchers, int ms) {
    Thread t =
        new Thread(
            () -> {
              try {
                while (true) {
                  Thread.sleep(ms);
                  long[] started = Timed.now();
                  searchers.maybeRefreshBlocking();
                  REOPENS.add(started);
                }
              } catch (InterruptedException
                  | IOException
                  | org.apache.lucene.store.AlreadyClosedException e) {
                // The index is closing.
              }
            },
            "nrt-reopen");
    t.setDaemon(true);
    t.start();
  }

  /** How many times something was done, and its wall-clock and thread CPU time. */
  private static final class Timed {
    private static final java.lang.management.ThreadMXBean THREADS =
        java.lang.management.ManagementFactory.getThreadMXBean();
    private final java.util.concurrent.atomic.AtomicLong count =
        new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong nanos =
        new java.util.concurrent.atomic.AtomicLong();
    private final java.util.concurrent.atomic.AtomicLong cpuNanos =
        new java.util.concurrent.atomic.AtomicLong();

    /**
     * The wall clock and this thread's CPU clock, nanoseconds, at the start of something timed:
     * the CPU clock read first, so that the wall-clock time leaves out its system call ({@link
     * #add} reads them in the other order).
     */
    static long[] now() {
      long cpu = THREADS.getCurrentThreadCpuTime();
      return new long[] {System.nanoTime(), cpu};
    }

    /** Counts one more, begun at {@code started} (from {@link #now}) on this thread. */
    void add(long[] started) {
      long[] end = {System.nanoTime(), THREADS.getCurrentThreadCpuTime()};
      count.incrementAndGet();
      nanos.addAndGet(end[0] - started[0]);
      cpuNanos.addAndGet(end[1] - started[1]);
    }

    /** {@code "NAMEs":N,"NAME_ms":W,"NAME_cpu_ms":C}. */
    String json(String name) {
      return "\"" + name + "s\":" + count.get() + ",\"" + name + "_ms\":" + nanos.get() / 1e6
          + ",\"" + name + "_cpu_ms\":" + cpuNanos.get() / 1e6;
    }
  }

  private static int positive(String flag, String value) {
    try {
      int n = Integer.parseInt(value);
      if (n >= 1) {
        return n;
      }
    } catch (NumberFormatException e) {
      // Fall through.
    }
    usage(flag + ": not a positive integer: " + value);
    return 0;
  }

  private static boolean isId(String s) {
    return !s.isEmpty() && s.chars().allMatch(c -> c >= '0' && c <= '9');
  }

  private void write(String line) {
    synchronized (out) {
      try {
        out.write(line);
        out.write('\n');
        out.flush();
      } catch (IOException e) {
        // The driver is gone; the process ends with its stdin.
      }
    }
  }

  private void begin() {
    synchronized (pendingLock) {
      pending++;
    }
  }

  private void end() {
    synchronized (pendingLock) {
      if (--pending == 0) {
        pendingLock.notifyAll();
      }
    }
  }

  private void awaitIdle() throws InterruptedException {
    synchronized (pendingLock) {
      while (pending > 0) {
        pendingLock.wait();
      }
    }
  }

  /** Heap from the JVM, resident memory from /proc/self/status. */
  private static String stats() {
    Runtime rt = Runtime.getRuntime();
    long heapCommitted = rt.totalMemory();
    long heapUsed = heapCommitted - rt.freeMemory();
    long rssKb = -1;
    long hwmKb = -1;
    try {
      for (String l : Files.readAllLines(Path.of("/proc/self/status"))) {
        if (l.startsWith("VmRSS:")) {
          rssKb = kb(l);
        } else if (l.startsWith("VmHWM:")) {
          hwmKb = kb(l);
        }
      }
    } catch (IOException | RuntimeException e) {
      // Leave -1.
    }
    return "{\"heap_used\":" + heapUsed + ",\"heap_committed\":" + heapCommitted
        + ",\"rss_kb\":" + rssKb + ",\"hwm_kb\":" + hwmKb
        + "," + UPDATES.json("update") + "," + REOPENS.json("reopen") + "}";
  }

  private static long kb(String statusLine) {
    return Long.parseLong(statusLine.replaceAll("[^0-9]", ""));
  }

  private static void usage(String message) {
    System.err.println("Serve: " + message);
    System.err.println(USAGE);
    System.exit(2);
  }
}
