import java.io.*;
import java.nio.charset.StandardCharsets;
import org.apache.lucene.analysis.Analyzer;
import org.apache.lucene.analysis.CharArraySet;
import org.apache.lucene.analysis.StopFilter;
import org.apache.lucene.analysis.TokenStream;
import org.apache.lucene.analysis.core.WhitespaceAnalyzer;
import org.apache.lucene.analysis.core.WhitespaceTokenizer;
import org.apache.lucene.analysis.synonym.SolrSynonymParser;
import org.apache.lucene.analysis.synonym.SynonymFilter;
import org.apache.lucene.analysis.synonym.SynonymGraphFilter;
import org.apache.lucene.analysis.synonym.SynonymMap;
import org.apache.lucene.analysis.tokenattributes.CharTermAttribute;
import org.apache.lucene.analysis.tokenattributes.OffsetAttribute;
import org.apache.lucene.analysis.tokenattributes.PositionIncrementAttribute;
import org.apache.lucene.analysis.tokenattributes.PositionLengthAttribute;
import org.apache.lucene.analysis.tokenattributes.TypeAttribute;

/**
 * Runs a whitespace tokenizer, a stop filter removing "x" and Lucene's
 * SynonymGraphFilter (graph 1) or SynonymFilter (graph 0) on each line of
 * standard input: the rules (Solr's format, read by SolrSynonymParser with
 * dedup, their words split at whitespace), expand (0/1), graph (0/1) and
 * the text, the rules and the text as hex of their UTF-8, split by tabs.
 * Prints the position after the text (the last token's position plus the
 * end's increment, plus one), then each token as hex of its UTF-8, its
 * position, position length, start and end offset and type, all split by
 * tabs, a line each, for synonym_cases.py.
 */
public class SynonymCases {
  static String hex(String s) { StringBuilder b = new StringBuilder(); for (byte x : s.getBytes(StandardCharsets.UTF_8)) b.append(String.format("%02x", x & 0xff)); return b.toString(); }
  static String unhex(String h) { byte[] b = new byte[h.length() / 2]; for (int i = 0; i < b.length; i++) b[i] = (byte) Integer.parseInt(h.substring(2 * i, 2 * i + 2), 16); return new String(b, StandardCharsets.UTF_8); }
  public static void main(String[] args) throws Exception {
    BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
    PrintStream out = new PrintStream(new BufferedOutputStream(System.out), false, StandardCharsets.UTF_8);
    CharArraySet stop = new CharArraySet(java.util.List.of("x"), false);
    String line;
    while ((line = in.readLine()) != null) {
      String[] p = line.split("\t", -1);
      SolrSynonymParser parser = new SolrSynonymParser(true, p[1].equals("1"), new WhitespaceAnalyzer());
      parser.parse(new StringReader(unhex(p[0])));
      SynonymMap map = parser.build();
      WhitespaceTokenizer tokenizer = new WhitespaceTokenizer();
      tokenizer.setReader(new StringReader(unhex(p[3])));
      TokenStream stopped = new StopFilter(tokenizer, stop);
      TokenStream filter = p[2].equals("1") ? new SynonymGraphFilter(stopped, map, false) : new SynonymFilter(stopped, map, false);
      StringBuilder row = new StringBuilder();
      try (TokenStream stream = filter) {
        CharTermAttribute term = stream.addAttribute(CharTermAttribute.class);
        PositionIncrementAttribute inc = stream.addAttribute(PositionIncrementAttribute.class);
        PositionLengthAttribute len = stream.addAttribute(PositionLengthAttribute.class);
        OffsetAttribute off = stream.addAttribute(OffsetAttribute.class);
        TypeAttribute type = stream.addAttribute(TypeAttribute.class);
        stream.reset();
        int pos = -1;
        while (stream.incrementToken()) {
          pos += inc.getPositionIncrement();
          row.append('\t').append(hex(term.toString())).append(',').append(pos).append(',').append(len.getPositionLength())
              .append(',').append(off.startOffset()).append(',').append(off.endOffset()).append(',').append(type.type());
        }
        stream.end();
        out.println((pos + inc.getPositionIncrement() + 1) + row.toString());
      }
    }
    out.flush();
  }
}
