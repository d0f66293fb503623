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
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.queryparser.classic.MultiFieldQueryParser;
import org.apache.lucene.queryparser.classic.QueryParser;
import org.apache.lucene.search.IndexSearcher;
import org.apache.lucene.search.Query;
import org.apache.lucene.search.ScoreDoc;
import org.apache.lucene.search.TopDocs;
import org.apache.lucene.store.MMapDirectory;
import org.apache.lucene.util.Version;

/**
 * Serves a {@link BenchIndex} index over the WSBench line protocol (bench/PROTOCOL.md).
 *
 * <pre>
 * Serve --index DIR --threads T [--query-cache]
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
 */
public final class Serve {
  private static final String USAGE = "usage: Serve --index DIR [--threads T] [--query-cache]";
  private static final Set<String> ID_ONLY = Set.of(BenchIndex.ID);

  private final IndexSearcher searcher;
  private final ThreadLocal<QueryParser> parsers;
  private final Writer out;
  private final Object pendingLock = new Object();
  private int pending;

  private Serve(IndexSearcher searcher, Writer out) {
    this.searcher = searcher;
    this.out = out;
    StandardAnalyzer analyzer = new StandardAnalyzer();
    this.parsers =
        ThreadLocal.withInitial(() -> new MultiFieldQueryParser(BenchIndex.TEXT_FIELDS, analyzer));
  }

  public static void main(String[] args) throws Exception {
    Path indexDir = null;
    int threads = 1;
    boolean queryCache = false;
    for (int i = 0; i < args.length; i++) {
      if (args[i].equals("--query-cache")) {
        queryCache = true;
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
    try (MMapDirectory dir = new MMapDirectory(indexDir);
        DirectoryReader reader = DirectoryReader.open(dir)) {
      IndexSearcher searcher = new IndexSearcher(reader);
      if (!queryCache) {
        // tantivy has no query cache; repeated non-scoring counts would hit Lucene's LRUQueryCache.
        searcher.setQueryCache(null);
      }
      Serve serve = new Serve(searcher, out);
      serve.write(
          "READY\t{\"engine\":\"lucene\",\"version\":\""
              + Version.LATEST
              + "\",\"docs\":"
              + reader.numDocs()
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
        serve.begin();
        pool.execute(
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
    }
    out.flush();
    System.exit(0);
  }

  /** Answers one request line; never throws. */
  private String answer(String line) {
    String[] parts = line.split("\t", 4);
    String id = parts[0].strip();
    try {
      if (parts.length < 4) {
        throw new IllegalArgumentException("expected ID\\tMODE\\tK\\tQUERY");
      }
      if (!isId(id)) {
        throw new IllegalArgumentException("bad request id \"" + id + "\"");
      }
      boolean count =
          switch (parts[1]) {
            case "top" -> false;
            case "count" -> true;
            default -> throw new IllegalArgumentException("unknown mode \"" + parts[1] + "\"");
          };
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
      TopDocs top = searcher.search(query, k);
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
      String message = t.getMessage() == null ? t.getClass().getSimpleName() : t.getMessage();
      if (!(t instanceof IllegalArgumentException)) {
        message = t.getClass().getSimpleName() + ": " + message;
      }
      return (isId(id) ? id : "-1") + "\tERROR\t" + message.replaceAll("[\t\r\n]+", " ");
    }
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
        + ",\"rss_kb\":" + rssKb + ",\"hwm_kb\":" + hwmKb + "}";
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
