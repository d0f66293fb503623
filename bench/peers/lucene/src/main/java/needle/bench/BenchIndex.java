package needle.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.stream.Stream;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import java.util.Base64;
import org.apache.lucene.document.BinaryDocValuesField;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.DoubleField;
import org.apache.lucene.document.KeywordField;
import org.apache.lucene.document.LongField;
import org.apache.lucene.document.NumericDocValuesField;
import org.apache.lucene.util.BytesRef;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.StringField;
import org.apache.lucene.document.TextField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LogDocMergePolicy;
import org.apache.lucene.index.SerialMergeScheduler;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.Directory;
import org.apache.lucene.store.FSDirectory;

/**
 * Builds the on-disk WSBench index of a JSONL corpus (bench/PROTOCOL.md), served by {@link Serve}.
 *
 * <pre>
 * BenchIndex --corpus FILE.jsonl[.gz] --index DIR
 * </pre>
 *
 * <p>Fields: {@code id} ({@link StringField}, stored), {@code title} and {@code body} (tokenized,
 * stored, positions + offsets, norms); {@code last_modified} (a whole number) as a numeric doc
 * value and {@code title_dv} (base64 text) as a binary doc value when a document has them (the
 * update benchmark's corpus: {@code needle-bench with-values}); the field-value benchmark's {@code
 * tag} ({@link KeywordField}: a term and sorted-set doc values), {@code words} and {@code stamp}
 * ({@link LongField}: points and sorted-numeric doc values) and {@code rating} ({@link
 * DoubleField}), from the same corpus; every other corpus field is ignored. {@link
 * StandardAnalyzer} defaults, {@link BM25Similarity} defaults. One thread, documents in file order,
 * then {@code forceMerge(1)}: one segment whose doc ids follow the corpus lines. DIR is replaced.
 */
public final class BenchIndex {
  static final String ID = "id";
  static final String LAST_MODIFIED = "last_modified";
  static final String TITLE_DV = "title_dv";
  static final String[] TEXT_FIELDS = {"title", "body"};

  private static final String USAGE = "usage: BenchIndex --corpus FILE.jsonl[.gz] --index DIR";

  /** {@link TextField#TYPE_STORED} plus offsets. */
  private static final FieldType TEXT_TYPE = textType();

  private BenchIndex() {}

  private static FieldType textType() {
    FieldType type = new FieldType(TextField.TYPE_STORED);
    type.setIndexOptions(IndexOptions.DOCS_AND_FREQS_AND_POSITIONS_AND_OFFSETS);
    type.freeze();
    return type;
  }

  public static void main(String[] args) throws Exception {
    Path corpus = null;
    Path indexDir = null;
    for (int i = 0; i < args.length; i++) {
      String value = i + 1 < args.length ? args[i + 1] : null;
      switch (args[i]) {
        case "--corpus" -> corpus = Path.of(require(value, args[i]));
        case "--index" -> indexDir = Path.of(require(value, args[i]));
        default -> usage("unknown argument " + args[i]);
      }
      i++;
    }
    if (corpus == null || indexDir == null) {
      usage("--corpus and --index are required");
    }

    long start = System.nanoTime();
    deleteTree(indexDir);
    Files.createDirectories(indexDir);
    long docs = 0;
    long indexedNanos;
    try (Directory dir = FSDirectory.open(indexDir)) {
      try (IndexWriter writer = new IndexWriter(dir, CorpusIndex.writerConfig());
          BufferedReader in = CorpusIndex.openText(corpus)) {
        String line;
        long lineNo = 0;
        while ((line = in.readLine()) != null) {
          lineNo++;
          if (line.isBlank()) {
            continue;
          }
          Map<String, Object> json;
          try {
            json = Json.parseObject(line);
          } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("corpus line " + lineNo + ": " + e.getMessage(), e);
          }
          writer.addDocument(toDocument(json, lineNo));
          docs++;
        }
        writer.commit();
        indexedNanos = System.nanoTime() - start;
        writer.forceMerge(1);
        writer.commit();
      }
      try (DirectoryReader reader = DirectoryReader.open(dir)) {
        if (reader.leaves().size() != 1 || reader.numDocs() != docs) {
          throw new IllegalStateException(
              "expected one segment of " + docs + " docs, got " + reader.leaves().size()
                  + " segment(s) of " + reader.numDocs());
        }
      }
    }
    System.err.printf(
        "BenchIndex: indexed %d docs in %.1fs, merged to one segment; total %.1fs, %d bytes on"
            + " disk%n",
        docs, indexedNanos / 1e9, (System.nanoTime() - start) / 1e9, dirSize(indexDir));
  }

  static Document toDocument(Map<String, Object> json, long lineNo) {
    if (!(json.get(ID) instanceof String id)) {
      throw new IllegalArgumentException("corpus line " + lineNo + ": no string \"id\"");
    }
    Document doc = new Document();
    doc.add(new StringField(ID, id, Field.Store.YES));
    for (String name : TEXT_FIELDS) {
      if (json.get(name) instanceof String text) {
        doc.add(new Field(name, text, TEXT_TYPE));
      }
    }
    if (json.get(LAST_MODIFIED) instanceof Number n) {
      doc.add(new NumericDocValuesField(LAST_MODIFIED, n.longValue()));
    }
    if (json.get(TITLE_DV) instanceof String b64) {
      doc.add(new BinaryDocValuesField(TITLE_DV, new BytesRef(Base64.getDecoder().decode(b64))));
    }
    if (json.get("tag") instanceof String tag) {
      doc.add(new KeywordField("tag", tag, Field.Store.NO));
    }
    for (String name : new String[] {"words", "stamp"}) {
      if (json.get(name) instanceof Number n) {
        doc.add(new LongField(name, n.longValue(), Field.Store.NO));
      }
    }
    if (json.get("rating") instanceof Number n) {
      doc.add(new DoubleField("rating", n.doubleValue(), Field.Store.NO));
    }
    return doc;
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    try (Stream<Path> paths = Files.walk(dir)) {
      for (Path p : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.delete(p);
      }
    }
  }

  private static long dirSize(Path dir) throws IOException {
    try (Stream<Path> paths = Files.list(dir)) {
      long total = 0;
      for (Path p : paths.toList()) {
        if (Files.isRegularFile(p)) {
          total += Files.size(p);
        }
      }
      return total;
    }
  }

  private static String require(String value, String flag) {
    if (value == null) {
      usage(flag + " needs a value");
    }
    return value;
  }

  private static void usage(String message) {
    System.err.println("BenchIndex: " + message);
    System.err.println(USAGE);
    System.exit(2);
  }
}
