package needle.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.zip.GZIPInputStream;
import org.apache.lucene.analysis.standard.StandardAnalyzer;
import org.apache.lucene.document.Document;
import org.apache.lucene.document.Field;
import org.apache.lucene.document.FieldType;
import org.apache.lucene.document.StringField;
import org.apache.lucene.index.DirectoryReader;
import org.apache.lucene.index.IndexOptions;
import org.apache.lucene.index.IndexWriter;
import org.apache.lucene.index.IndexWriterConfig;
import org.apache.lucene.index.LogDocMergePolicy;
import org.apache.lucene.index.SerialMergeScheduler;
import org.apache.lucene.index.StoredFields;
import org.apache.lucene.search.similarities.BM25Similarity;
import org.apache.lucene.store.Directory;

/**
 * The peer's indexing of a JSONL corpus, shared by {@link Golden} and {@link TermStats}.
 *
 * <p>One thread, documents in file order, then {@code forceMerge(1)}, so Lucene doc id = line
 * number. The {@code id} string is stored as {@link #ID_FIELD} (not searched); every other string
 * field is a stored text field with positions, offsets and norms. Analyzer: {@link
 * StandardAnalyzer} defaults (no stop words); similarity: {@link BM25Similarity} defaults.
 */
final class CorpusIndex {
  /** The stored, unsearched field holding each document's {@code id}. */
  static final String ID_FIELD = "_id";

  /** Text fields: tokenized, stored, positions + offsets, norms on. */
  private static final FieldType TEXT_TYPE = textFieldType();

  private CorpusIndex() {}

  private static FieldType textFieldType() {
    FieldType type = new FieldType();
    type.setTokenized(true);
    type.setStored(true);
    type.setOmitNorms(false);
    type.setIndexOptions(IndexOptions.DOCS_AND_FREQS_AND_POSITIONS_AND_OFFSETS);
    type.freeze();
    return type;
  }

  /**
   * Indexes the corpus into {@code dir} as one segment in file order. Appends each document's id
   * to {@code ids} and returns the names of the text fields seen.
   */
  static SortedSet<String> index(Path corpus, Directory dir, List<String> ids) throws IOException {
    SortedSet<String> textFields = new TreeSet<>();
    try (IndexWriter writer = new IndexWriter(dir, writerConfig());
        BufferedReader in = openText(corpus)) {
      String line;
      while ((line = in.readLine()) != null) {
        if (line.isBlank()) {
          continue;
        }
        Map<String, Object> json = Json.parseObject(line);
        writer.addDocument(toDocument(json, ids, textFields));
      }
      writer.forceMerge(1);
      writer.commit();
    }
    return textFields;
  }

  /**
   * One indexing thread (this one), adjacent-only merges and a serial scheduler: the single merged
   * segment keeps the documents in the order they were added.
   */
  static IndexWriterConfig writerConfig() {
    IndexWriterConfig config = new IndexWriterConfig(new StandardAnalyzer());
    config.setOpenMode(IndexWriterConfig.OpenMode.CREATE);
    config.setSimilarity(new BM25Similarity());
    config.setMergePolicy(new LogDocMergePolicy());
    config.setMergeScheduler(new SerialMergeScheduler());
    config.setRAMBufferSizeMB(256);
    return config;
  }

  private static Document toDocument(
      Map<String, Object> json, List<String> ids, Set<String> textFields) {
    if (!(json.get("id") instanceof String id)) {
      throw new IllegalArgumentException("document without a string \"id\": " + json.keySet());
    }
    ids.add(id);
    Document doc = new Document();
    doc.add(new StringField(ID_FIELD, id, Field.Store.YES));
    for (Map.Entry<String, Object> entry : json.entrySet()) {
      if (!entry.getKey().equals("id") && entry.getValue() instanceof String text) {
        doc.add(new Field(entry.getKey(), text, TEXT_TYPE));
        textFields.add(entry.getKey());
      }
    }
    return doc;
  }

  /** Fails unless the index is one segment whose doc ids follow the corpus order. */
  static void checkDocOrder(DirectoryReader reader, List<String> ids) throws IOException {
    if (reader.leaves().size() != 1 || reader.maxDoc() != ids.size()) {
      throw new IllegalStateException("expected one segment of " + ids.size() + " docs");
    }
    StoredFields stored = reader.storedFields();
    for (int doc = 0; doc < ids.size(); doc++) {
      if (!ids.get(doc).equals(stored.document(doc).get(ID_FIELD))) {
        throw new IllegalStateException("doc " + doc + " is not line " + doc + " of the corpus");
      }
    }
  }

  /** Opens a UTF-8 text file, gunzipping it when its name ends with .gz. */
  static BufferedReader openText(Path file) throws IOException {
    InputStream in = Files.newInputStream(file);
    if (file.getFileName().toString().endsWith(".gz")) {
      in = new GZIPInputStream(in, 1 << 16);
    }
    return new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8), 1 << 16);
  }
}
